/**
 * Learned window consumption: per account and window (5h, 7d, model-scoped), how much of the
 * window (utilisation, fraction 0–1) one weighted token costs, learned online from successive
 * quota snapshots against the usage served between them. Percentages of different plans and
 * windows are not the same unit of work, so each account's each window is learned on its own.
 *
 * A sample is closed when the window's utilisation has risen by at least {@link MIN_SAMPLE_RISE}
 * since the last anchor: (rise, weighted tokens served since). A reset between two snapshots
 * (the reset time moved, or the utilisation fell) discards the open sample. The estimate is the
 * ratio of sums Σrise / Σtokens (evidence that arrives a little before or after its tokens
 * cancels out in the sums), with a confidence from the sample count and the residual variance.
 * Until there is evidence the estimate blends into a cautious default (a small allowance).
 * Pure: no I/O, no clock; state objects are plain JSON (persisted with the router state).
 */

import type { QuotaSnapshot, QuotaWindow } from './types';

/** Tokens of one answer (or one reservation, or a request's estimate: `CostEstimate` in src/routing/costEstimate.ts is this type) by kind (the four counts of Anthropic's `usage`). */
export interface TokensByKind {
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
}

/** `into += sign × t`, kind by kind, in place (token counts are integers: the sums stay exact, and an account with nothing in flight is zeroed exactly). */
export function addTokens(into: TokensByKind, t: Readonly<TokensByKind>, sign: 1 | -1): void {
  into.inputTokens += sign * t.inputTokens;
  into.cacheReadTokens += sign * t.cacheReadTokens;
  into.cacheWriteTokens += sign * t.cacheWriteTokens;
  into.outputTokens += sign * t.outputTokens;
}

/** What a cache-read token weighs against an input, cache-write or output token (as the world model charges it). */
export const CACHE_READ_WEIGHT = 0.1;

/** Weighted tokens: input + cache writes + output + 0.1 × cache reads. */
export function weightedTokens(t: TokensByKind): number {
  return t.inputTokens + t.cacheWriteTokens + t.outputTokens + CACHE_READ_WEIGHT * t.cacheReadTokens;
}

/** A window of an account: `5h`, `7d`, or `scoped:<family>` (a model's weekly window). */
export type WindowKey = '5h' | '7d' | `scoped:${string}`;

/** The learner's state for one window of one account. JSON-safe: persisted as it is. */
export interface WindowCostState {
  /** Utilisation (fraction 0–1) at the anchor snapshot; null before the first snapshot. */
  anchorUsed: number | null;
  /** The window's reset at the anchor, epoch ms; null when the window was not ticking. */
  anchorResetMs: number | null;
  /** Weighted tokens served since the anchor. */
  pendingTokens: number;
  /** Closed samples, decayed (effective count). */
  n: number;
  /** Decayed sums over the closed samples: rise (fraction), tokens, rise², rise × tokens, tokens². */
  sumRise: number;
  sumTokens: number;
  sumRise2: number;
  sumRiseTokens: number;
  sumTokens2: number;
}

/** What was learned of one window. */
export interface LearnedCost {
  /** Fraction of the window (0–1) one weighted token uses. */
  fractionPerToken: number;
  /** 0–1: 0 = no evidence (the default applies in full), 1 = many consistent samples. */
  confidence: number;
  /** Effective number of samples (decayed). */
  samples: number;
}

/** A rise below this (fraction) is rounding in the headers, not a sample: the sample stays open. */
export const MIN_SAMPLE_RISE = 0.01;
/** A reset time that moved by more than this (ms) is a new window. */
const RESET_MOVED_MS = 60_000;
/** A fall larger than this (fraction) is a reset the reset time did not show. */
const FALL_IS_RESET = 0.005;
/** Each new sample weighs the old ones by this: plans change, the estimate follows (effective memory ≈ 50 samples). */
const DECAY = 0.98;
/** Samples of pseudo-evidence for the default: confidence = n / (n + this) × consistency. */
const PRIOR_SAMPLES = 3;

/** Cautious defaults until there is evidence: the weighted tokens assumed to fill each window (a small plan). */
export const DEFAULT_WINDOW_TOKENS: Readonly<Record<'5h' | '7d', number>> = { '5h': 1_000_000, '7d': 10_000_000 };

/** A learner with no evidence. */
export function emptyWindowCost(): WindowCostState {
  return { anchorUsed: null, anchorResetMs: null, pendingTokens: 0, n: 0, sumRise: 0, sumTokens: 0, sumRise2: 0, sumRiseTokens: 0, sumTokens2: 0 };
}

/** Counts `tokens` (weighted) served on the window since its last snapshot. O(1). */
export function addServed(s: WindowCostState, tokens: number): void {
  if (tokens > 0 && Number.isFinite(tokens)) s.pendingTokens += tokens;
}

/**
 * A snapshot of the window: closes a sample when the utilisation rose by at least
 * {@link MIN_SAMPLE_RISE}, discards the open one at a reset. O(1).
 * @param used utilisation, fraction 0–1
 * @param resetMs the window's reset, epoch ms (null: not ticking)
 */
export function observe(s: WindowCostState, used: number, resetMs: number | null): void {
  if (!Number.isFinite(used)) return;
  const moved = s.anchorResetMs !== null && resetMs !== null && Math.abs(resetMs - s.anchorResetMs) > RESET_MOVED_MS;
  if (s.anchorUsed === null || moved || used < s.anchorUsed - FALL_IS_RESET) {
    anchor(s, used, resetMs);
    return;
  }
  const rise = used - s.anchorUsed;
  if (rise < MIN_SAMPLE_RISE) {
    if (s.anchorResetMs === null) s.anchorResetMs = resetMs;
    return;
  }
  if (s.pendingTokens > 0) addSample(s, rise, s.pendingTokens);
  anchor(s, used, resetMs);
}

/**
 * One sample: the window rose by `rise` (fraction) while `tokens` weighted tokens were served. The
 * older samples are weighed by `decay` first (1: a plain sum, as a whole log is read offline).
 */
export function addSample(s: WindowCostState, rise: number, tokens: number, decay = DECAY): void {
  s.n = s.n * decay + 1;
  s.sumRise = s.sumRise * decay + rise;
  s.sumTokens = s.sumTokens * decay + tokens;
  s.sumRise2 = s.sumRise2 * decay + rise * rise;
  s.sumRiseTokens = s.sumRiseTokens * decay + rise * tokens;
  s.sumTokens2 = s.sumTokens2 * decay + tokens * tokens;
}

function anchor(s: WindowCostState, used: number, resetMs: number | null): void {
  s.anchorUsed = used;
  s.anchorResetMs = resetMs;
  s.pendingTokens = 0;
}

/** The estimate, or undefined before the first sample. */
export function learnedCost(s: WindowCostState | undefined): LearnedCost | undefined {
  if (!s || s.n <= 0 || s.sumTokens <= 0 || s.sumRise <= 0) return undefined;
  const c = s.sumRise / s.sumTokens;
  // Regression through the origin: rise ≈ c × tokens; the relative standard error of c says how consistent the samples are.
  let consistency = 0;
  if (s.n > 1.5 && s.sumTokens2 > 0) {
    const rss = Math.max(0, s.sumRise2 - 2 * c * s.sumRiseTokens + c * c * s.sumTokens2);
    const se = Math.sqrt(rss / (s.n - 1) / s.sumTokens2);
    consistency = Math.max(0, 1 - se / c);
  }
  return { fractionPerToken: c, confidence: (s.n / (s.n + PRIOR_SAMPLES)) * consistency, samples: s.n };
}

/**
 * The fraction of the window one weighted token is expected to use: the learned cost blended with
 * the cautious default by its confidence (no evidence: the default alone).
 */
export function expectedCostPerToken(learned: LearnedCost | undefined, window: '5h' | '7d'): number {
  const fallback = 1 / DEFAULT_WINDOW_TOKENS[window];
  if (!learned) return fallback;
  return learned.confidence * learned.fractionPerToken + (1 - learned.confidence) * fallback;
}

/** A saved learner read back: a malformed one is dropped (undefined). */
export function readWindowCost(v: unknown): WindowCostState | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const o = v as Record<string, unknown>;
  const nums = ['pendingTokens', 'n', 'sumRise', 'sumTokens', 'sumRise2', 'sumRiseTokens', 'sumTokens2'] as const;
  if (!nums.every((k) => typeof o[k] === 'number' && Number.isFinite(o[k]) && o[k] >= 0)) return undefined;
  const nullableNum = (x: unknown) => x === null || (typeof x === 'number' && Number.isFinite(x));
  if (!nullableNum(o.anchorUsed) || !nullableNum(o.anchorResetMs)) return undefined;
  const s = emptyWindowCost();
  for (const k of nums) s[k] = o[k] as number;
  s.anchorUsed = o.anchorUsed as number | null;
  s.anchorResetMs = o.anchorResetMs as number | null;
  return s;
}

/** What was learned of an account's two main windows (what `forecast` reads). */
export interface AccountLearnedCosts {
  fiveHour?: LearnedCost;
  sevenDay?: LearnedCost;
}

/** Saved learners: by account, then window key. */
export type SavedLearnedCosts = Record<string, Record<string, WindowCostState>>;

/**
 * Every account's learners, fed from the quota snapshots and the usage served. Each call is O(1)
 * in the number of sessions and requests (O(model-scoped windows) at most).
 */
export class LearnedCosts {
  private readonly accounts = new Map<string, Map<WindowKey, WindowCostState>>();
  /**
   * Per account, the 5h and 7d windows it observed last. Seeing the same window objects again (an
   * answer repeating the previous answer's headers: headers.ts's reader shares them) changes no
   * learner — a repeated observation is a no-op — so it is not looked at. Forgotten whenever the
   * learners are replaced.
   */
  private readonly lastSeen = new Map<string, { readonly session: QuotaWindow | undefined; readonly weekly: QuotaWindow | undefined }>();

  /**
   * Usage served on `account`: counted on its 5h and 7d windows, and on the model's scoped window
   * when one was seen.
   * @param family the request's model family (`opus`, …), if known
   */
  served(account: string, tokens: TokensByKind, family?: string): void {
    const w = weightedTokens(tokens);
    if (!(w > 0)) return;
    const m = this.windows(account);
    addServed(windowOf(m, '5h'), w);
    addServed(windowOf(m, '7d'), w);
    // Past the two account-wide windows only when a scoped one was seen (no key string built per answer otherwise).
    if (family && m.size > 2) {
      const scoped = m.get(`scoped:${family}`);
      if (scoped) addServed(scoped, w);
    }
  }

  /** A quota snapshot of `account` as it arrived (not merged: a carried-over window is old evidence). */
  observe(account: string, snapshot: QuotaSnapshot): void {
    const m = this.windows(account);
    const seen = this.lastSeen.get(account);
    if (seen === undefined || seen.session !== snapshot.session || seen.weekly !== snapshot.weekly) {
      see(m, '5h', snapshot.session);
      see(m, '7d', snapshot.weekly);
      this.lastSeen.set(account, { session: snapshot.session, weekly: snapshot.weekly });
    }
    const scoped = snapshot.scoped;
    if (scoped) for (const family in scoped) see(m, `scoped:${family}`, scoped[family]);
  }

  /** What was learned of `account`'s 5h and 7d windows (undefined before any sample). */
  costs(account: string): AccountLearnedCosts | undefined {
    const m = this.accounts.get(account);
    if (!m) return undefined;
    const fiveHour = learnedCost(m.get('5h'));
    const sevenDay = learnedCost(m.get('7d'));
    return fiveHour || sevenDay ? { fiveHour, sevenDay } : undefined;
  }

  /** What was learned of one window (for `/status` and tests). */
  window(account: string, key: WindowKey): LearnedCost | undefined {
    return learnedCost(this.accounts.get(account)?.get(key));
  }

  forget(account: string): void {
    this.accounts.delete(account);
    this.lastSeen.delete(account);
  }

  clear(): void {
    this.accounts.clear();
    this.lastSeen.clear();
  }

  /** The persisted shape (copies). */
  toSaved(): SavedLearnedCosts {
    const out: SavedLearnedCosts = {};
    for (const [account, m] of this.accounts) out[account] = Object.fromEntries([...m].map(([k, s]) => [k, { ...s }]));
    return out;
  }

  /**
   * Loads saved learners; a malformed account or window is skipped. `replace`: an account's saved
   * windows replace its own; otherwise the one with more samples wins per window.
   */
  load(saved: unknown, replace = true): void {
    if (!saved || typeof saved !== 'object') return;
    for (const [account, windows] of Object.entries(saved as Record<string, unknown>)) {
      if (!windows || typeof windows !== 'object') continue;
      this.lastSeen.delete(account);
      const m = this.windows(account);
      for (const [key, v] of Object.entries(windows as Record<string, unknown>)) {
        const s = readWindowCost(v);
        if (!s || !isWindowKey(key)) continue;
        const mine = m.get(key);
        if (replace || !mine || mine.n < s.n) m.set(key, s);
      }
    }
  }

  private windows(account: string): Map<WindowKey, WindowCostState> {
    let m = this.accounts.get(account);
    if (!m) this.accounts.set(account, (m = new Map<WindowKey, WindowCostState>()));
    return m;
  }
}

function windowOf(m: Map<WindowKey, WindowCostState>, key: WindowKey): WindowCostState {
  let s = m.get(key);
  if (!s) m.set(key, (s = emptyWindowCost()));
  return s;
}

function see(m: Map<WindowKey, WindowCostState>, key: WindowKey, w: QuotaWindow | undefined): void {
  if (w?.utilization === undefined) return;
  observe(windowOf(m, key), w.utilization, w.resetAtMs ? w.resetAtMs : null);
}

function isWindowKey(k: string): k is WindowKey {
  return k === '5h' || k === '7d' || (k.startsWith('scoped:') && k.length > 'scoped:'.length);
}
