/**
 * In-flight leases per account. A lease is acquired per upstream attempt and
 * released exactly once, by whoever acquired it, on every path (completion,
 * stream end, error, client abort). `release()` is idempotent, so a second
 * call on an error path can never drive a count negative.
 *
 * A lease of a Messages call also reserves the request's estimated cost on its account
 * (docs/cost-leases.md): the one release takes back the count and the reservation together;
 * `reconcile()` is that release with the answer's actual usage, which the model's output
 * sample learns from.
 */
import type { CostEstimate } from '../../routing/costEstimate';
import type { UsageRecord } from '../../routing/decision';
import { OutputSamples } from './outputSamples';

/** One held lease. */
export interface Lease {
  readonly account: string;
  /** Releases the lease (count and reservation); later calls, and a later reconcile, do nothing. */
  release(): void;
  /**
   * Releases the lease of a complete answer: its output tokens join the model's sample, once. The
   * estimate is gone with the reservation, so the work is counted once, as what it really was.
   * After a release it does nothing.
   */
  reconcile(usage: UsageRecord): void;
}

/** What a lease reserves: a request's estimated cost, and the model whose outputs its answer teaches. */
export interface CostReservation {
  cost: Readonly<CostEstimate>;
  /** The request's model; null when it named none (nothing is learned). */
  model: string | null;
}

export class LeaseTable {
  private readonly counts = new Map<string, number>();
  /** Sum of the reservations in flight per account; an entry is replaced, never changed, so a plan may keep it. */
  private readonly reservations = new Map<string, Readonly<CostEstimate>>();
  /** Leases per account and session, keyed `account` NUL `session key hash`: whether a session already has a request on an account. */
  private readonly sessionCounts = new Map<string, number>();

  /**
   * @param onChange called after every acquire and release
   * @param outputs the per-model output samples that reconciled leases feed (it reports its own changes)
   */
  constructor(
    private readonly onChange: () => void = () => undefined,
    readonly outputs: OutputSamples = new OutputSamples(),
  ) {}

  /**
   * Takes a lease on `account`, reserving `reservation` when given. Never refuses: caps are the caller's policy.
   * @param session the request's sticky key hash (16 hex), null without one
   */
  acquire(account: string, session: string | null = null, reservation?: CostReservation): Lease {
    bump(this.counts, account, 1);
    const key = session === null ? null : sessionKey(account, session);
    if (key !== null) bump(this.sessionCounts, key, 1);
    if (reservation) this.reservations.set(account, add(this.reservations.get(account), reservation.cost, 1));
    this.onChange();
    let released = false;
    const release = () => {
      if (released) return false;
      released = true;
      bump(this.counts, account, -1);
      if (key !== null) bump(this.sessionCounts, key, -1);
      if (reservation) {
        const left = add(this.reservations.get(account), reservation.cost, -1);
        if (isEmpty(left)) this.reservations.delete(account);
        else this.reservations.set(account, left);
      }
      return true;
    };
    return {
      account,
      release: () => {
        if (release()) this.onChange();
      },
      reconcile: (usage) => {
        if (!release()) return;
        // record() reports the change for both.
        if (reservation?.model) this.outputs.record(reservation.model, usage.outputTokens);
        else this.onChange();
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

  /** The estimated tokens reserved on `account` by the requests in flight, by kind; undefined when none. */
  reserved(account: string): Readonly<CostEstimate> | undefined {
    return this.reservations.get(account);
  }

  /** Requests in flight on all accounts. */
  total(): number {
    let n = 0;
    for (const v of this.counts.values()) n += v;
    return n;
  }
}

/** `sum + sign × cost`, a new object. */
function add(sum: Readonly<CostEstimate> | undefined, cost: Readonly<CostEstimate>, sign: 1 | -1): CostEstimate {
  return {
    inputTokens: (sum?.inputTokens ?? 0) + sign * cost.inputTokens,
    cacheReadTokens: (sum?.cacheReadTokens ?? 0) + sign * cost.cacheReadTokens,
    cacheWriteTokens: (sum?.cacheWriteTokens ?? 0) + sign * cost.cacheWriteTokens,
    outputTokens: (sum?.outputTokens ?? 0) + sign * cost.outputTokens,
  };
}

function isEmpty(c: CostEstimate): boolean {
  return c.inputTokens <= 0 && c.cacheReadTokens <= 0 && c.cacheWriteTokens <= 0 && c.outputTokens <= 0;
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
