/**
 * Verdicts: what the filter says of one account for one request, as a code with its figures,
 * and the words people read, built only when someone reads them (status, panel, CLI). Pure;
 * times are epoch ms, fractions are 0–1 (the words show percent).
 */
import { formatDuration } from '../../quota/duration';

/** The filter's verdict on one account for one request. Times are epoch ms; `null` = unknown. */
export type FilterVerdict =
  | { code: 'eligible' }
  /** Usable, but its 5h window is at or above the session soft limit (tried after the eligible ones). */
  | { code: 'soft_limit'; used: number; resetMs: number | null }
  /** At `max-inflight-per-account`: usable, but the attempt loop skips it while it stays at its cap. */
  | { code: 'over_cap'; inflight: number; cap: number }
  | { code: 'cooling'; reason: string; untilMs: number | null }
  /** Cooling for an exhausted window whose quota now reads recovered: the next request without a binding re-checks it (a probe). */
  | { code: 'recovery_probe'; untilMs: number | null }
  | { code: 'window_exhausted'; window: '5h' | '7d' | 'unified'; resetMs: number | null }
  | { code: 'scoped_exhausted'; family: string; resetMs: number | null }
  | { code: 'needs_sign_in' }
  | { code: 'disabled' }
  /**
   * The session's bound account, over a sticky reallocation threshold: `used` = reported usage plus
   * in-flight pressure and `threshold`, both percent (0–100). Usable, but the session moved off it.
   */
  | { code: 'over_sticky_threshold'; window: '5h' | '7d'; used: number; threshold: number };

/**
 * What `forecast` estimated of one account for one request. Tokens are weighted tokens
 * (src/quota/learnedCosts.ts); each window's figures hold until that window's reset.
 */
export interface ForecastFigures {
  /** Useful remaining capacity of the 5h and 7d windows: remaining allowance − reservations − the bound sessions' expected work, tokens (can be negative). */
  free5h: number;
  free7d: number;
  /** The new session's expected work before each window's reset (or the end of its expected life), tokens. */
  need5h: number;
  need7d: number;
  /** The expected work fits both windows without starving the bound sessions. */
  fits: boolean;
  /** Tokens of the week kept back when no account fits (the accounts it does not fit are ordered by free7d − reserve7d). */
  reserve7d: number;
  /** The weekly reset it was ordered by, epoch ms (null: none pending). */
  weeklyResetMs: number | null;
}

/** The loser's own figures `lossText` reads (AccountMetrics has them all). Epoch ms (+∞ = none), fractions. */
export interface LossFigures {
  weeklyResetMs: number;
  sessionResetMs: number;
  weeklyUsed: number | null;
  headroom: number | null;
  /** Under `forecast`: what it estimated of the loser. */
  forecast?: ForecastFigures;
}

const COOLING_WORDS: Record<string, string> = {
  throttle: 'throttled',
  overloaded: 'overloaded',
  server_error: 'server errors',
  forbidden: 'forbidden (403)',
  window_exhausted: 'usage window exhausted',
};

const WINDOW_WORDS = { '5h': '5-hour window', '7d': 'weekly window', unified: 'usage limit' } as const;

const pct = (f: number | null): string => (f === null ? '?' : `${Math.round(f * 100)} %`);

/** A percentage (0–100) in words: whole numbers as they are, others to one decimal (`70.5 %`). */
const percentText = (p: number): string => `${Number.isInteger(p) ? p : p.toFixed(1)} %`;

/** A clock time for a reset: `14:05` within a day of `now`, `Fri 09:00` later (local time); `unknown` when not finite. */
export function clockTime(ms: number | null, now: number): string {
  if (ms === null || !Number.isFinite(ms)) return 'unknown';
  const d = new Date(ms);
  const hm = `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
  return ms - now < 86_400_000 ? hm : `${d.toLocaleDateString('en-GB', { weekday: 'short' })} ${hm}`;
}

/** The filter verdict in words at `now` (epoch ms): "cooling — throttled, 27 s remaining". */
export function verdictText(v: FilterVerdict, now: number): string {
  switch (v.code) {
    case 'eligible':
      return 'eligible';
    case 'soft_limit':
      return `5-hour window at ${pct(v.used)} (soft limit) — resets ${clockTime(v.resetMs, now)}`;
    case 'over_cap':
      return `at its in-flight cap (${v.inflight} of ${v.cap})`;
    case 'cooling': {
      const left = v.untilMs === null ? 'no known end' : `${formatDuration((v.untilMs - now) / 1000)} remaining`;
      return `cooling — ${COOLING_WORDS[v.reason] ?? v.reason.replace(/_/g, ' ')}, ${left}`;
    }
    case 'recovery_probe':
      return `quota reads recovered — the next new request re-checks it (else cooling ${v.untilMs === null ? 'with no known end' : `until ${clockTime(v.untilMs, now)}`})`;
    case 'window_exhausted':
      return `${WINDOW_WORDS[v.window]} exhausted — resets ${clockTime(v.resetMs, now)}`;
    case 'scoped_exhausted':
      return `weekly window for ${v.family} exhausted — resets ${clockTime(v.resetMs, now)}`;
    case 'needs_sign_in':
      return 'needs sign-in';
    case 'disabled':
      return 'disabled';
    case 'over_sticky_threshold':
      return `over sticky threshold (${v.window === '7d' ? 'weekly' : '5-hour'} ${percentText(v.used)} > ${percentText(v.threshold)})`;
  }
}

const ORDINAL = (n: number): string => {
  const teen = n % 100 >= 11 && n % 100 <= 13;
  const suffix = teen ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
};

/**
 * Why a loser lost, from its own side: `reason` is the candidate verdict's reason code, `rank` its
 * 0-based position, `f` its own figures, `filter` its filter verdict (default eligible).
 * "eligible — ranked 2nd: weekly reset later (Fri 09:00)".
 */
export function lossText(reason: string, rank: number, f: LossFigures, now: number, filter?: FilterVerdict): string {
  return `${filter ? verdictText(filter, now) : 'eligible'} — ranked ${ORDINAL(rank + 1)}: ${lossWords(reason, f, now)}`;
}

/** Weighted tokens in words: `420k`, `3.1M`. */
function tokensText(t: number): string {
  const a = Math.abs(t);
  const s = a >= 1e6 ? `${(a / 1e6).toFixed(1)}M` : a >= 1e3 ? `${Math.round(a / 1e3)}k` : `${Math.round(a)}`;
  return t < 0 ? `−${s}` : s;
}

/**
 * A forecast in words: "5-hour: 420k free for 80k expected; weekly: 3.1M free for 80k expected"
 * (free = remaining allowance after reservations and bound sessions' expected work, weighted tokens).
 */
export function forecastText(f: ForecastFigures): string {
  return `5-hour: ${tokensText(f.free5h)} free for ${tokensText(f.need5h)} expected; weekly: ${tokensText(f.free7d)} free for ${tokensText(f.need7d)} expected`;
}

function lossWords(reason: string, f: LossFigures, now: number): string {
  switch (reason) {
    case 'forecast_fits':
      return `the session's expected work does not fit before the resets${f.forecast ? ` (${forecastText(f.forecast)})` : ''}`;
    case 'forecast_expiry':
      return `its weekly allowance expires later (${clockTime(f.forecast?.weeklyResetMs ?? f.weeklyResetMs, now)})${f.forecast ? `; ${forecastText(f.forecast)}` : ''}`;
    case 'forecast_margin':
      return `less room for the session's expected work${f.forecast ? ` (${forecastText(f.forecast)})` : ''}`;
    case 'weekly_reset':
      return Number.isFinite(f.weeklyResetMs) ? `weekly reset later (${clockTime(f.weeklyResetMs, now)})` : 'no weekly reset pending';
    case 'session_reset':
      return Number.isFinite(f.sessionResetMs) ? `5-hour reset later (${clockTime(f.sessionResetMs, now)})` : 'no 5-hour reset pending';
    case 'weekly_utilization':
      return `weekly window less used (${pct(f.weeklyUsed)})`;
    case 'scoped_utilization':
      return "model's weekly window less used";
    case 'headroom':
      return `less headroom (${pct(f.headroom)})`;
    case 'quota_evidence':
      return 'its quota data is older or missing';
    case 'session_headroom':
      return 'at the 5-hour soft limit';
    case 'scoped_headroom':
      return "at the model's weekly soft limit";
    case 'availability':
      return 'another account is usable';
    case 'cooldown_recovery':
      return 'recovers later';
    case 'configured_primary':
      return 'tied, and the winner is the primary';
    case 'insertion_order':
      return 'tied, and later in the account order';
    case 'session_affinity':
      return 'the session is bound to another account';
    case 'preferred_primary':
      return 'the primary is preferred';
    case 'spill_inflight':
      return 'the busy first choice spilled to another account';
    case 'recovery_probe':
      return 'another account is being re-checked (its quota reads recovered)';
    case 'evidence_probe':
      return "another account's quota is being read (it had no quota data)";
    case 'sticky_reallocation':
      return 'the session moved off its account, over the sticky threshold, to one below it';
    case 'earlier_reset':
      return Number.isFinite(f.weeklyResetMs)
        ? `another account's weekly window resets on an earlier day (this one ${clockTime(f.weeklyResetMs, now)})`
        : "another account's weekly window resets sooner";
    case 'round_robin':
      return 'later in this round-robin turn';
    case 'configured_order':
    case 'sequential_order':
      return 'later in the configured order';
    case 'fallback_last':
      return 'fallback accounts go last';
    case 'capacity_draw':
      return 'drawn later (capacity-weighted)';
    case 'availability_draw':
      return 'lower availability, or drawn later';
    case 'least_used':
      return `more used (weekly ${pct(f.weeklyUsed)})`;
    case 'reset_bucket':
      return Number.isFinite(f.weeklyResetMs) ? `weekly reset on a later day (${clockTime(f.weeklyResetMs, now)})` : 'no weekly reset pending';
    case 'remaining_capacity':
      return `same reset day, less remaining (weekly ${pct(f.weeklyUsed)})`;
    case 'weighted_score':
      return 'lower score';
    case 'score_tie':
      return 'same score, placed by the session hash';
    case 'routing_policy_error':
      return 'the policy failed, so plain expiry-first ordered';
    default:
      return reason.replace(/_/g, ' ');
  }
}
