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
  /** Their summed expected rate, weighted tokens per ms. */
  tokensPerMs: number;
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
}

export class SessionWork {
  /** In order of last service: the oldest first, so expiry pops from the front. */
  private readonly sessions = new Map<string, SessionEntry>();
  private readonly accounts = new Map<string, BoundWork>();
  private fleetRate = DEFAULT_SESSION_TOKENS_PER_MS;
  /** Expected lifetime of a session, ms; null until a session has ended (then the idle TTL stands in). */
  private fleetLifeMs: number | null = null;

  /** @param idleTtlMs a session idle longer than this (ms) no longer counts (the binding's idle TTL) */
  constructor(private idleTtlMs: number) {}

  setIdleTtl(idleTtlMs: number): void {
    this.idleTtlMs = idleTtlMs;
  }

  /**
   * A turn of `session` that `account` served, started at `atMs`, of `tokens` weighted tokens. The
   * session now counts on `account` (it leaves the account it counted on before).
   */
  served(session: string, account: string, tokens: number, atMs: number): void {
    this.expire(atMs);
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
      entry = { account, firstAtMs: prev.firstAtMs, lastAtMs: Math.max(atMs, prev.lastAtMs), tokensPerTurn, gapMs, rate };
    } else {
      entry = { account, firstAtMs: atMs, lastAtMs: atMs, tokensPerTurn: tokens, gapMs: null, rate: this.fleetRate };
    }
    this.sessions.set(session, entry);
    const w = this.accounts.get(account);
    if (w) {
      w.sessions++;
      w.tokensPerMs += entry.rate;
    } else this.accounts.set(account, { sessions: 1, tokensPerMs: entry.rate });
  }

  /** The bound work of `account` at `nowMs`; undefined when no live session counts on it. */
  accountWork(account: string, nowMs: number): BoundWork | undefined {
    this.expire(nowMs);
    return this.accounts.get(account);
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
    for (const [id, e] of this.sessions) if (e.account === account) this.sessions.delete(id);
    this.accounts.delete(account);
  }

  clear(): void {
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
    w.tokensPerMs -= e.rate;
    // The sum is kept by additions and subtractions: an emptied account is exactly zero again.
    if (w.sessions <= 0) this.accounts.delete(e.account);
    else if (w.tokensPerMs < 0) w.tokensPerMs = 0;
  }
}
