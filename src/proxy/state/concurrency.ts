/**
 * Per-account admission state that outlives a request: the concurrency limit learned from the
 * upstream's concurrency throttles (the rules: src/routing/concurrencyLimit.ts), the slow-start
 * ramp of an account a herd moves to, and the account's queue in the waiting room
 * (docs/routing.md#concurrency-limits, docs/routing.md#admission-ramp). An account has an entry
 * only while it has something to remember, so a healthy pool holds none. Not persisted: like
 * leases, it starts empty.
 */
import { limitAfterSuccess, limitAfterThrottle, liveLimit, type LearnedLimit } from '../../routing/concurrencyLimit';

/** An account's slow-start ramp: counts of requests. */
export interface Ramp {
  /** Requests admitted under the ramp that may await their first answer at once (starts at 1, +1 per answer committed; see {@link rampWindow} for its growth with time). */
  window: number;
  /** Requests admitted under the ramp whose answer has not been committed yet. */
  pending: number;
  /** When it started, epoch ms. */
  readonly startedAtMs: number;
}

/** A ramp's window doubles at least this often, ms, answers or not: a slow first answer (a token refresh, a slow upstream) holds a herd for seconds, not until the wait bound. */
export const RAMP_DOUBLING_MS = 1_000;

/** `ramp`'s window at `now` (epoch ms): grown by its committed answers, and doubled every {@link RAMP_DOUBLING_MS} since it started. */
export function rampWindow(ramp: Ramp, now: number): number {
  const doublings = Math.floor((now - ramp.startedAtMs) / RAMP_DOUBLING_MS);
  return Math.max(ramp.window, doublings >= 30 ? Infinity : 2 ** doublings);
}

/** What a request admitted onto an account with admission state counts against it until its answer is committed or its attempt ends. */
export interface AdmissionTicket {
  readonly account: string;
  /** Requests in flight on the account when it was sent, itself included. */
  readonly sentInflight: number;
  /** The ramp it was admitted under, if any. */
  readonly ramp: Ramp | undefined;
}

/** The waiting-room queue of `label`'s requests that wait for room on it. */
export function admissionQueue(label: string): string {
  return `admission:${label}`;
}

/** One account's admission state. */
export class AccountAdmission {
  learned: LearnedLimit | undefined;
  ramp: Ramp | undefined;
  /** Its queue in the waiting room ({@link admissionQueue}). */
  readonly queue: string;

  constructor(readonly label: string) {
    this.queue = admissionQueue(label);
  }
}

/** The admission state of every account that has some. */
export class ConcurrencyTable {
  private readonly accounts = new Map<string, AccountAdmission>();
  /** Per account, the `setAtMs` of the last cooldown after which it started a ramp. */
  private readonly rampedAfter = new Map<string, number>();
  /** Until this moment (epoch ms) an idle account that takes a request starts a ramp: an account that carried traffic became unusable, so a herd may be moving. 0: none. */
  herdUntilMs = 0;
  /** The account the last planned Messages request chose first (src/proxy/pipeline/herd.ts): where new traffic went. Undefined before the first. */
  lastFirstChoice: string | undefined;

  /**
   * @param onChange called after any change
   * @param onLearned called when a learned limit changed here (not when absorbed from another router)
   */
  constructor(
    private readonly onChange: () => void = () => undefined,
    private readonly onLearned: (label: string, learned: LearnedLimit | undefined) => void = () => undefined,
  ) {}

  /** No account has an entry and no herd is moving: admission is the cap alone. */
  get quiet(): boolean {
    return this.accounts.size === 0 && this.herdUntilMs === 0;
  }

  get(label: string): AccountAdmission | undefined {
    return this.accounts.get(label);
  }

  /** `label`'s entry, created when it has none. */
  entry(label: string): AccountAdmission {
    let a = this.accounts.get(label);
    if (!a) this.accounts.set(label, (a = new AccountAdmission(label)));
    return a;
  }

  /** Every entry. */
  entries(): IterableIterator<AccountAdmission> {
    return this.accounts.values();
  }

  /** The limit learned for `label` that holds at `now` (epoch ms); a limit past its quiet spell is forgotten here. */
  limit(label: string, now: number): LearnedLimit | undefined {
    const a = this.accounts.get(label);
    if (a?.learned === undefined) return undefined;
    const live = liveLimit(a.learned, now);
    if (!live) this.setLearned(a, undefined);
    return live;
  }

  /** A concurrency throttle of a request sent with `inflightAtSend` in flight and answered with `inflightAtAnswer` (itself included in both), at `now` (epoch ms). */
  throttled(label: string, inflightAtSend: number, inflightAtAnswer: number, now: number): LearnedLimit {
    const a = this.entry(label);
    const next = limitAfterThrottle(this.limit(label, now), inflightAtSend, inflightAtAnswer, now);
    this.setLearned(a, next);
    return next;
  }

  /** A success (an answer committed) of a request sent with `inflightAtSend` in flight (itself included). */
  succeeded(label: string, inflightAtSend: number): void {
    const a = this.accounts.get(label);
    if (a?.learned !== undefined) this.setLearned(a, limitAfterSuccess(a.learned, inflightAtSend));
  }

  /** Starts `label`'s ramp at one request, at `now` (epoch ms); a running ramp is kept. */
  startRamp(label: string, now: number): Ramp {
    const a = this.entry(label);
    if (!a.ramp) {
      a.ramp = { window: 1, pending: 0, startedAtMs: now };
      this.onChange();
    }
    return a.ramp;
  }

  /** Ends `label`'s ramp, if it has one. */
  endRamp(label: string): void {
    const a = this.accounts.get(label);
    if (a?.ramp === undefined) return;
    a.ramp = undefined;
    this.onChange();
  }

  /**
   * Notes that `label` starts a ramp after the cooldown that was set at `setAtMs` (epoch ms).
   * @returns false when it already did for that cooldown
   */
  rampAfterCooldown(label: string, setAtMs: number): boolean {
    if (this.rampedAfter.get(label) === setAtMs) return false;
    this.rampedAfter.set(label, setAtMs);
    return true;
  }

  /** Drops `label`'s entry when it remembers nothing and `waiting` (the requests in its queue) is 0. */
  tidy(label: string, waiting: number): void {
    const a = this.accounts.get(label);
    if (a && a.learned === undefined && a.ramp === undefined && waiting === 0) this.accounts.delete(label);
  }

  /** Takes another router's learned limit of `label` (the shared store; undefined: forgotten there), telling nobody back. */
  absorb(label: string, learned: LearnedLimit | undefined): void {
    const a = learned === undefined ? this.accounts.get(label) : this.entry(label);
    if (!a || a.learned?.limit === learned?.limit) return;
    a.learned = learned;
    this.onChange();
  }

  /** Forgets an account that was removed. */
  forget(label: string): void {
    this.accounts.delete(label);
    this.rampedAfter.delete(label);
  }

  private setLearned(a: AccountAdmission, next: LearnedLimit | undefined): void {
    const changed = a.learned?.limit !== next?.limit;
    a.learned = next;
    if (!changed) return;
    this.onChange();
    this.onLearned(a.label, next);
  }
}
