/**
 * Rate-limit windows of a fake account: a token budget that fills with traffic and empties
 * when its reset time passes. All times epoch ms from the injected clock; utilisation is a
 * FRACTION of `limitTokens`.
 */

/** Length of the 5-hour session window, ms (18_000_000). */
export const FIVE_HOUR_MS = 5 * 60 * 60 * 1000;
/** Length of the 7-day weekly window (and model-scoped windows), ms (604_800_000). */
export const SEVEN_DAY_MS = 7 * 24 * 60 * 60 * 1000;
/** Default 5h window size, tokens. */
export const DEFAULT_FIVE_HOUR_LIMIT_TOKENS = 2_000_000;
/** Default 7d window size, tokens. */
export const DEFAULT_SEVEN_DAY_LIMIT_TOKENS = 20_000_000;
/** Utilisation FRACTION from which a window reports `allowed_warning`. */
export const WARNING_FRACTION = 0.8;
/** Weight of a cache-read token in the windows (fraction of a token). */
export const CACHE_READ_WEIGHT = 0.1;

/** The token counts of one served answer, with Anthropic's field names. */
export interface ChargedUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

/** Tokens a served answer counts in its windows: input + cache creation + output + 0.1 × cache read (may be fractional). */
export function chargedTokens(u: ChargedUsage): number {
  return u.input_tokens + u.cache_creation_input_tokens + u.output_tokens + CACHE_READ_WEIGHT * u.cache_read_input_tokens;
}

/** Per-window verdict as the unified headers spell it. */
export type WindowStatus = 'allowed' | 'allowed_warning' | 'rejected';

/** Status for a utilisation FRACTION: allowed < 0.8 <= allowed_warning < 1 <= rejected. */
export function windowStatus(fraction: number): WindowStatus {
  if (fraction >= 1) return 'rejected';
  if (fraction >= WARNING_FRACTION) return 'allowed_warning';
  return 'allowed';
}

const STATUS_RANK: Record<WindowStatus, number> = { allowed: 0, allowed_warning: 1, rejected: 2 };

/** The worse of two statuses. */
export function worseStatus(a: WindowStatus, b: WindowStatus): WindowStatus {
  return STATUS_RANK[a] >= STATUS_RANK[b] ? a : b;
}

/**
 * Canonical window name (`5h`, `7d`, `7d_<family>`) from either spelling: header style
 * (`5h`, `7d_sonnet`) or claim/usage style (`five_hour`, `seven_day_sonnet`). Null if neither.
 */
export function canonicalWindowName(name: string): string | null {
  const n = name.trim().toLowerCase();
  if (n === '5h' || n === 'five_hour') return '5h';
  if (n === '7d' || n === 'seven_day') return '7d';
  const m = /^(?:7d_|seven_day_)([a-z0-9]+)$/.exec(n);
  return m ? `7d_${m[1]}` : null;
}

/** Representative-claim spelling of a canonical window name: `5h` → `five_hour`, `7d_opus` → `seven_day_opus`. */
export function claimName(windowName: string): string {
  if (windowName === '5h') return 'five_hour';
  if (windowName === '7d') return 'seven_day';
  return windowName.replace(/^7d_/, 'seven_day_');
}

/** State saved when a fault exhausts a window, so clearing the fault can restore it. */
interface ForcedState {
  prevUsedTokens: number;
  prevResetAtMs: number | null;
  perWindowOnly: boolean;
}

/** One window: token budget, tokens used, reset time (null until the first request after a reset). */
export class UsageWindow {
  /** Tokens counted in the current window (fractional: cache reads count 0.1 each). */
  usedTokens: number;
  /** Reset time, epoch ms; null while the window has not started. */
  resetAtMs: number | null;
  private forced: ForcedState | null = null;

  /**
   * @param name canonical name (`5h`, `7d`, `7d_<family>`)
   * @param durationMs full window length, ms
   * @param limitTokens budget in tokens (> 0)
   * @param initialUsedFraction starting utilisation FRACTION
   * @param resetAtMs starting reset time, epoch ms, or null (starts on first request)
   */
  constructor(
    readonly name: string,
    readonly durationMs: number,
    readonly limitTokens: number,
    initialUsedFraction: number,
    resetAtMs: number | null,
  ) {
    this.usedTokens = Math.max(0, initialUsedFraction) * limitTokens;
    this.resetAtMs = resetAtMs;
  }

  /** Empty the window if its reset time has passed (`nowMs >= resetAtMs`). */
  roll(nowMs: number): void {
    if (this.resetAtMs !== null && nowMs >= this.resetAtMs) {
      this.usedTokens = 0;
      this.resetAtMs = null;
      this.forced = null;
    }
  }

  /** Roll, then start the window if needed: the next reset is a full window from `nowMs`. */
  start(nowMs: number): void {
    this.roll(nowMs);
    if (this.resetAtMs === null) this.resetAtMs = nowMs + this.durationMs;
  }

  /** Utilisation FRACTION (may exceed 1). */
  get utilization(): number {
    return this.usedTokens / this.limitTokens;
  }

  get status(): WindowStatus {
    return windowStatus(this.utilization);
  }

  /** True while a fault keeps this window exhausted. */
  get exhaustedByFault(): boolean {
    return this.forced !== null;
  }

  /** True if a fault asked for 429s with only the per-window headers. */
  get perWindowOnly(): boolean {
    return this.forced?.perWindowOnly ?? false;
  }

  /** Count tokens (may be fractional). */
  add(tokens: number): void {
    this.usedTokens += tokens;
  }

  /** Fault: utilisation >= 1 until `nowMs + resetInMs` (ms). */
  exhaust(nowMs: number, resetInMs: number, perWindowOnly: boolean): void {
    this.roll(nowMs);
    if (!this.forced) this.forced = { prevUsedTokens: this.usedTokens, prevResetAtMs: this.resetAtMs, perWindowOnly };
    else this.forced.perWindowOnly = perWindowOnly;
    this.usedTokens = Math.max(this.usedTokens, this.limitTokens);
    this.resetAtMs = nowMs + resetInMs;
  }

  /** Undo a fault-made exhaustion (restores usage and reset as they were). Returns whether there was one. */
  lift(): boolean {
    if (!this.forced) return false;
    this.usedTokens = this.forced.prevUsedTokens;
    this.resetAtMs = this.forced.prevResetAtMs;
    this.forced = null;
    return true;
  }
}

/** Model families recognised in model ids. */
export const MODEL_FAMILIES = ['opus', 'sonnet', 'haiku'] as const;

/**
 * Model family of a model id: a configured scoped-window key, else `opus`/`sonnet`/`haiku`,
 * found as a substring (case-insensitive). Null if none.
 */
export function modelFamily(model: string, scopedKeys: readonly string[] = []): string | null {
  const m = model.toLowerCase();
  for (const k of scopedKeys) if (k && m.includes(k.toLowerCase())) return k.toLowerCase();
  for (const f of MODEL_FAMILIES) if (m.includes(f)) return f;
  return null;
}
