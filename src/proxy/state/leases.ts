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
import { addTokens } from '../../quota/learnedCosts';
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

/** Another router's requests in flight on one account, and what they reserve (the shared store's view). */
export interface RemoteLoad {
  inflight: number;
  reserved: Readonly<CostEstimate> | undefined;
}

export class LeaseTable {
  private readonly counts = new Map<string, number>();
  /** The other routers' in-flight counts and reservations per account, when the pool is shared (sharedState.ts); empty otherwise. */
  private remote = new Map<string, RemoteLoad>();
  /** Sum of the reservations in flight per account, added to in place (no object per lease); read out as copies. */
  private readonly reservations = new Map<string, CostEstimate>();
  /** Leases per account, then per session key hash: whether a session already has a request on an account (no key is built per request). */
  private readonly sessionCounts = new Map<string, Map<string, number>>();

  /**
   * @param onChange called after every acquire and release
   * @param outputs the per-model output samples that reconciled leases feed (it reports its own changes)
   * @param onCounts called after every acquire and release too (the shared store's write-behind)
   */
  constructor(
    private readonly onChange: () => void = () => undefined,
    readonly outputs: OutputSamples = new OutputSamples(),
    private readonly onCounts: () => void = () => undefined,
  ) {}

  /**
   * Takes a lease on `account`, reserving `reservation` when given. Never refuses: caps are the caller's policy.
   * @param session the request's sticky key hash (16 hex), null without one
   */
  acquire(account: string, session: string | null = null, reservation?: CostReservation): Lease {
    bump(this.counts, account, 1);
    let sessions: Map<string, number> | undefined;
    if (session !== null) {
      sessions = this.sessionCounts.get(account);
      if (sessions === undefined) this.sessionCounts.set(account, (sessions = new Map<string, number>()));
      bump(sessions, session, 1);
    }
    if (reservation) {
      const sum = this.reservations.get(account);
      if (sum === undefined) this.reservations.set(account, copyOf(reservation.cost));
      else addTokens(sum, reservation.cost, 1);
    }
    this.onChange();
    this.onCounts();
    return new HeldLease(this, account, sessions, session, reservation);
  }

  /** Gives back what one lease took: its count, its session's count, its reservation. Called once per lease (HeldLease). */
  giveBack(account: string, sessions: Map<string, number> | undefined, session: string | null, reservation: CostReservation | undefined): void {
    bump(this.counts, account, -1);
    if (sessions !== undefined) bump(sessions, session!, -1); // the per-account map stays: accounts are few
    const sum = reservation && this.reservations.get(account);
    if (sum) {
      addTokens(sum, reservation.cost, -1);
      if (isEmpty(sum)) this.reservations.delete(account);
    }
    this.onCounts();
  }

  /** Reports a lease's release without an output to learn from. */
  released(): void {
    this.onChange();
  }

  /** Requests in flight on `account`: this router's and, when the pool is shared, the other routers'. */
  inflight(account: string): number {
    const mine = this.counts.get(account) ?? 0;
    return this.remote.size === 0 ? mine : mine + (this.remote.get(account)?.inflight ?? 0);
  }

  /** This router's own requests in flight and reservations (copies the caller owns), per account that has any (what it tells the shared store). */
  local(): Array<[account: string, inflight: number, reserved: CostEstimate | undefined]> {
    return [...this.counts].map(([account, n]) => {
      const sum = this.reservations.get(account);
      return [account, n, sum && copyOf(sum)];
    });
  }

  /** Replaces what the other routers of a shared pool have in flight (empty: none known, e.g. the store is unreachable). */
  setRemote(remote: Map<string, RemoteLoad>): void {
    this.remote = remote;
    this.onChange();
  }

  /** Requests of the session with key hash `session` in flight on `account`. */
  sessionInflight(account: string, session: string): number {
    return this.sessionCounts.get(account)?.get(session) ?? 0;
  }

  /**
   * The estimated tokens reserved on `account` by the requests in flight (this router's and the other
   * routers'), by kind, as of now (a new object the caller may keep); undefined when none.
   */
  reserved(account: string): Readonly<CostEstimate> | undefined {
    const mine = this.reservations.get(account);
    const theirs = this.remote.size === 0 ? undefined : this.remote.get(account)?.reserved;
    if (theirs === undefined) return mine && copyOf(mine);
    if (mine === undefined) return copyOf(theirs);
    const sum = copyOf(mine);
    addTokens(sum, theirs, 1);
    return sum;
  }

  /** Requests in flight on all accounts (this router's and, when the pool is shared, the other routers'). */
  total(): number {
    let n = 0;
    for (const v of this.counts.values()) n += v;
    for (const r of this.remote.values()) n += r.inflight;
    return n;
  }
}

/** One lease: an object, not closures, since every upstream attempt makes one. */
class HeldLease implements Lease {
  private done = false;

  constructor(
    private readonly table: LeaseTable,
    readonly account: string,
    private readonly sessions: Map<string, number> | undefined,
    private readonly session: string | null,
    private readonly reservation: CostReservation | undefined,
  ) {}

  release(): void {
    if (this.giveBack()) this.table.released();
  }

  reconcile(usage: UsageRecord): void {
    if (!this.giveBack()) return;
    // record() reports the change for both.
    if (this.reservation?.model) this.table.outputs.record(this.reservation.model, usage.outputTokens);
    else this.table.released();
  }

  private giveBack(): boolean {
    if (this.done) return false;
    this.done = true;
    this.table.giveBack(this.account, this.sessions, this.session, this.reservation);
    return true;
  }
}

function copyOf(c: Readonly<CostEstimate>): CostEstimate {
  return { inputTokens: c.inputTokens, cacheReadTokens: c.cacheReadTokens, cacheWriteTokens: c.cacheWriteTokens, outputTokens: c.outputTokens };
}

function isEmpty(c: CostEstimate): boolean {
  return c.inputTokens <= 0 && c.cacheReadTokens <= 0 && c.cacheWriteTokens <= 0 && c.outputTokens <= 0;
}

/** Adds `by` to `map`'s count of `key`, dropping it at 0. */
function bump(map: Map<string, number>, key: string, by: number): void {
  const n = (map.get(key) ?? 0) + by;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}
