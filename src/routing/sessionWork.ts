/**
 * The expected work of the sessions bound to each account, kept incrementally for `forecast`:
 * each live session's recent cadence (weighted tokens per turn ÷ time between its turns, an
 * exponential average) is summed per account, so the planner reads one number per account instead
 * of walking the bindings. A session with one turn so far counts at the fleet's expected rate. A
 * session idle longer than the idle TTL leaves the sums (the affinity store forgets it too).
 * Every call is O(1) amortised. Pure: the time is always an argument (epoch ms). In memory only.
 */

/** Weight of the newest turn in a session's averages. */
const ALPHA = 0.3;
/** Weight of one session's newest rate in the fleet's expected rate. */
const FLEET_ALPHA = 0.02;
/** Weight of one ended session's lifetime in the fleet's expected life. */
const LIFE_ALPHA = 0.05;
/**
 * The fleet's expected rate before any session has shown its own, in weighted tokens per ms
 * (0.1 = 360,000 an hour: a busy Claude Code session).
 */
export const DEFAULT_SESSION_TOKENS_PER_MS = 0.1;

/** The bound sessions of one account. */
export interface BoundWork {
  /** Live sessions last served by the account. */
  sessions: number;
  /** Their summed expected rate, each decayed by its idle time (exp(−idle ÷ IDLE_DECAY_MS)), weighted tokens per ms. */
  tokensPerMs: number;
  /** Their summed expected rate, each decayed by its idle time on the short scale (exp(−idle ÷ MEAN_DECAY_MS)), weighted tokens per ms. */
  meanTokensPerMs?: number;
}

/**
 * How fast an idle session's expected work fades, ms: a session idle this long counts at 1/e of its
 * rate (idle 15 min: 0.72, 60 min: 0.26), since a session that stopped turning is likely done. Measured
 * on the generated week (docs/policies.md#forecast-on-the-generated-week).
 */
export const IDLE_DECAY_MS = 45 * 60_000;
/**
 * How fast an idle session's work fades in the nearer-the-mean rate, ms (idle 10 min: 0.37): sessions
 * turn every minute or two and last about 25 min, so one idle this long has most likely ended. Read by
 * `forecast` only for the 5-hour fit near a weekly reset, where over-counting leaves the week unused.
 */
export const MEAN_DECAY_MS = 10 * 60_000;
/** Decayed sums are kept relative to a reference time, moved forward once they grow by e^REBASE_AFTER. */
const REBASE_AFTER = 200;

/** An account's sums: rates scaled by exp((last turn − reference) ÷ IDLE_DECAY_MS). */
interface AccountSum {
  sessions: number;
  scaled: number;
  scaledMean: number;
}

interface SessionEntry {
  account: string;
  firstAtMs: number;
  lastAtMs: number;
  /** Average weighted tokens per turn. */
  tokensPerTurn: number;
  /** Average ms between the starts of consecutive turns; null after one turn. */
  gapMs: number | null;
  /** The rate counted in its account's sum, weighted tokens per ms. */
  rate: number;
  /** That rate as counted in the sum: × exp((lastAtMs − reference) ÷ IDLE_DECAY_MS). */
  scaled: number;
  scaledMean: number;
}

export class SessionWork {
  /** In order of last service: the oldest first, so expiry pops from the front. */
  private readonly sessions = new Map<string, SessionEntry>();
  private readonly accounts = new Map<string, AccountSum>();
  /** The reference time of the scaled sums, epoch ms. */
  private refMs: number | null = null;
  private fleetRate = DEFAULT_SESSION_TOKENS_PER_MS;
  /** Expected lifetime of a session, ms; null until a session has ended (then the idle TTL stands in). */
  private fleetLifeMs: number | null = null;
  /** The time of the last expiry pass with nothing served since, epoch ms (NaN: none): a plan reads every account at one time. */
  private expiredAtMs = NaN;
  /** The decay factor exp((refMs − decayAtMs) ÷ IDLE_DECAY_MS) last computed, for `decayAtMs` (NaN: none). */
  private decayAtMs = NaN;
  private decayRefMs: number | null = null;
  private decay = 0;
  private meanDecay = 0;

  /** @param idleTtlMs a session idle longer than this (ms) no longer counts (the binding's idle TTL) */
  constructor(private idleTtlMs: number) {}

  setIdleTtl(idleTtlMs: number): void {
    if (idleTtlMs === this.idleTtlMs) return;
    this.idleTtlMs = idleTtlMs;
    this.expiredAtMs = NaN;
  }

  /**
   * A turn of `session` that `account` served, started at `atMs`, of `tokens` weighted tokens. The
   * session now counts on `account` (it leaves the account it counted on before).
   */
  served(session: string, account: string, tokens: number, atMs: number): void {
    this.expire(atMs);
    this.rebase(atMs);
    this.expiredAtMs = NaN;
    const prev = this.sessions.get(session);
    let entry: SessionEntry;
    if (prev) {
      this.sessions.delete(session);
      this.subtract(prev);
      const gap = Math.min(Math.max(1, atMs - prev.lastAtMs), this.idleTtlMs);
      const gapMs = prev.gapMs === null ? gap : prev.gapMs + ALPHA * (gap - prev.gapMs);
      const tokensPerTurn = prev.tokensPerTurn + ALPHA * (tokens - prev.tokensPerTurn);
      const rate = tokensPerTurn / gapMs;
      this.fleetRate += FLEET_ALPHA * (rate - this.fleetRate);
      const lastAtMs = Math.max(atMs, prev.lastAtMs);
      entry = { account, firstAtMs: prev.firstAtMs, lastAtMs, tokensPerTurn, gapMs, rate, scaled: this.scale(rate, lastAtMs), scaledMean: this.scaleMean(rate, lastAtMs) };
    } else {
      const rate = this.fleetRate;
      entry = { account, firstAtMs: atMs, lastAtMs: atMs, tokensPerTurn: tokens, gapMs: null, rate, scaled: this.scale(rate, atMs), scaledMean: this.scaleMean(rate, atMs) };
    }
    this.sessions.set(session, entry);
    const w = this.accounts.get(account);
    if (w) {
      w.sessions++;
      w.scaled += entry.scaled;
      w.scaledMean += entry.scaledMean;
    } else this.accounts.set(account, { sessions: 1, scaled: entry.scaled, scaledMean: entry.scaledMean });
  }

  /** The bound work of `account` at `nowMs` (a new object); undefined when no live session counts on it. */
  accountWork(account: string, nowMs: number): BoundWork | undefined {
    if (nowMs !== this.expiredAtMs) {
      this.expire(nowMs);
      this.expiredAtMs = nowMs;
    }
    const w = this.accounts.get(account);
    if (!w) return undefined;
    if (this.refMs === null) return { sessions: w.sessions, tokensPerMs: 0, meanTokensPerMs: 0 };
    return { sessions: w.sessions, tokensPerMs: w.scaled * this.decayFactor(nowMs), meanTokensPerMs: w.scaledMean * this.meanDecay };
  }

  /**
   * exp((refMs − nowMs) ÷ IDLE_DECAY_MS), computed once per time and reference (a plan reads every
   * account at one time); sets {@link meanDecay}, the same on MEAN_DECAY_MS, alongside.
   */
  private decayFactor(nowMs: number): number {
    if (nowMs !== this.decayAtMs || this.refMs !== this.decayRefMs) {
      this.decay = Math.exp((this.refMs! - nowMs) / IDLE_DECAY_MS);
      this.meanDecay = Math.exp((this.refMs! - nowMs) / MEAN_DECAY_MS);
      this.decayAtMs = nowMs;
      this.decayRefMs = this.refMs;
    }
    return this.decay;
  }

  /** The expected rate of `session` (its own once it has two turns, else the fleet's), weighted tokens per ms. */
  expectedRate(session: string | null): number {
    const e = session === null ? undefined : this.sessions.get(session);
    return e && e.gapMs !== null ? e.rate : this.fleetRate;
  }

  /**
   * How long a session is expected to keep working, ms: the average lifetime of the sessions that
   * ended (first turn to last plus one gap), the idle TTL before any has.
   */
  expectedLifeMs(): number {
    return this.fleetLifeMs ?? this.idleTtlMs;
  }

  /** Forgets the sessions counted on `account` (removed or disabled). O(sessions). */
  forgetAccount(account: string): void {
    this.expiredAtMs = NaN;
    for (const [id, e] of this.sessions) if (e.account === account) this.sessions.delete(id);
    this.accounts.delete(account);
  }

  clear(): void {
    this.expiredAtMs = NaN;
    this.sessions.clear();
    this.accounts.clear();
  }

  /** Drops the sessions idle longer than the idle TTL at `nowMs` (oldest first). */
  private expire(nowMs: number): void {
    for (const [id, e] of this.sessions) {
      if (nowMs - e.lastAtMs <= this.idleTtlMs) break;
      this.sessions.delete(id);
      this.subtract(e);
      const life = e.lastAtMs - e.firstAtMs + (e.gapMs ?? 0);
      this.fleetLifeMs = this.fleetLifeMs === null ? life : this.fleetLifeMs + LIFE_ALPHA * (life - this.fleetLifeMs);
    }
  }

  private subtract(e: SessionEntry): void {
    const w = this.accounts.get(e.account);
    if (!w) return;
    w.sessions--;
    w.scaled -= e.scaled;
    w.scaledMean -= e.scaledMean;
    // The sum is kept by additions and subtractions: an emptied account is exactly zero again.
    if (w.sessions <= 0) this.accounts.delete(e.account);
    else {
      if (w.scaled < 0) w.scaled = 0;
      if (w.scaledMean < 0) w.scaledMean = 0;
    }
  }

  /** `rate` last turned at `atMs`, as counted in the scaled sums. */
  private scale(rate: number, atMs: number): number {
    return rate * Math.exp((atMs - this.refMs!) / IDLE_DECAY_MS);
  }

  private scaleMean(rate: number, atMs: number): number {
    return rate * Math.exp((atMs - this.refMs!) / MEAN_DECAY_MS);
  }

  /** Moves the reference time to `atMs` once the scale factors grow large (rare: O(sessions)). */
  private rebase(atMs: number): void {
    if (this.refMs === null) this.refMs = atMs;
    if (atMs - this.refMs < REBASE_AFTER * Math.min(IDLE_DECAY_MS, MEAN_DECAY_MS)) return;
    const f = Math.exp((this.refMs - atMs) / IDLE_DECAY_MS);
    const g = Math.exp((this.refMs - atMs) / MEAN_DECAY_MS);
    for (const e of this.sessions.values()) {
      e.scaled *= f;
      e.scaledMean *= g;
    }
    for (const w of this.accounts.values()) {
      w.scaled *= f;
      w.scaledMean *= g;
    }
    this.refMs = atMs;
  }
}
