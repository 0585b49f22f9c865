/**
 * In-flight leases per account. A lease is acquired per upstream attempt and
 * released exactly once, by whoever acquired it, on every path (completion,
 * stream end, error, client abort). `release()` is idempotent, so a second
 * call on an error path can never drive a count negative.
 */

/** One held lease. */
export interface Lease {
  readonly account: string;
  /** Releases the lease; later calls do nothing. */
  release(): void;
}

export class LeaseTable {
  private readonly counts = new Map<string, number>();
  /** Leases per account and session, keyed `account` NUL `session key hash`: whether a session already has a request on an account. */
  private readonly sessionCounts = new Map<string, number>();

  constructor(private readonly onChange: () => void = () => undefined) {}

  /**
   * Takes a lease on `account`. Never refuses: caps are the caller's policy.
   * @param session the request's sticky key hash (16 hex), null without one
   */
  acquire(account: string, session: string | null = null): Lease {
    bump(this.counts, account, 1);
    const key = session === null ? null : sessionKey(account, session);
    if (key !== null) bump(this.sessionCounts, key, 1);
    this.onChange();
    let released = false;
    return {
      account,
      release: () => {
        if (released) return;
        released = true;
        bump(this.counts, account, -1);
        if (key !== null) bump(this.sessionCounts, key, -1);
        this.onChange();
      },
    };
  }

  /** Requests in flight on `account`. */
  inflight(account: string): number {
    return this.counts.get(account) ?? 0;
  }

  /** Requests of the session with key hash `session` in flight on `account`. */
  sessionInflight(account: string, session: string): number {
    return this.sessionCounts.get(sessionKey(account, session)) ?? 0;
  }

  /** Requests in flight on all accounts. */
  total(): number {
    let n = 0;
    for (const v of this.counts.values()) n += v;
    return n;
  }
}

function sessionKey(account: string, session: string): string {
  return account + '\0' + session;
}

/** Adds `by` to `map`'s count of `key`, dropping it at 0. */
function bump(map: Map<string, number>, key: string, by: number): void {
  const n = (map.get(key) ?? 0) + by;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}
