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

  constructor(private readonly onChange: () => void = () => undefined) {}

  /** Takes a lease on `account`. Never refuses: caps are the caller's policy. */
  acquire(account: string): Lease {
    this.counts.set(account, (this.counts.get(account) ?? 0) + 1);
    this.onChange();
    let released = false;
    return {
      account,
      release: () => {
        if (released) return;
        released = true;
        const n = (this.counts.get(account) ?? 0) - 1;
        if (n <= 0) this.counts.delete(account);
        else this.counts.set(account, n);
        this.onChange();
      },
    };
  }

  /** Requests in flight on `account`. */
  inflight(account: string): number {
    return this.counts.get(account) ?? 0;
  }

  /** Requests in flight on all accounts. */
  total(): number {
    let n = 0;
    for (const v of this.counts.values()) n += v;
    return n;
  }
}
