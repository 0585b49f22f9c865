/**
 * `forecast`: places a new session where its expected work can use an allowance before that
 * allowance expires, without starving the sessions already there (docs/strategies.md#forecast).
 *
 * For each eligible account and each of its 5h and 7d windows, until that window's reset (at most
 * the idle TTL, the horizon a session is expected to keep working):
 *
 *   free = remaining fraction ÷ learned cost per token − reserved tokens − bound rate × span
 *   need = session rate × span
 *
 * (bound rate: each bound session's rate decayed by its idle time, src/routing/sessionWork.ts)
 * in weighted tokens (src/quota/learnedCosts.ts), span = min(time to reset, the sessions' expected
 * working horizon: their learned lifetime, the idle TTL until one is known). The bound rate is the
 * conservative one (idle decay 45 min: a safety margin against running a 5-hour window out under
 * bound sessions), except in the 5-hour window of an account whose weekly reset is less than
 * MEAN_BOUND_WITHIN_MS away: there what is left of the week expires unused unless it is spent, and
 * the nearer-the-mean rate (idle decay 10 min) lets new sessions take it. The session's work fits
 * an account when need ≤ free in both windows, the week less its reserve (below). Order: the
 * accounts it fits first, the soonest weekly reset among them first (its expiring allowance is used
 * only as far as the work bound there leaves room, so a burst spreads as each new binding adds its
 * rate); then the accounts it does not fit, the smallest shortfall first (the fewest forced moves
 * later); then configured order. The week's reserve (WEEKLY_RESERVE_WINDOWS 5-hour windows, held
 * until RESERVE_RELEASE_MS before the reset and released by RESERVE_RELEASED_MS before it) paces an
 * expiring week to its reset: spending it a day early leaves the account unusable while the others'
 * 5-hour windows run dry together. Bound sessions stay where they are: it runs with the on-quota
 * rebind mode. Constants measured on generated weeks (docs/policies.md#forecast-on-the-generated-week).
 */
import { expectedCostPerToken, weightedTokens } from '../../../quota/learnedCosts';
import { DEFAULT_SESSION_TOKENS_PER_MS } from '../../sessionWork';
import type { PlanAccount, SelectionReason } from '../types';
import type { ForecastFigures } from '../verdict';
import { tailLoss, withTails } from './common';
import type { OrderInput, Strategy } from './strategy';

const FIVE_HOUR_MS = 5 * 3_600_000;
const SEVEN_DAY_MS = 7 * 86_400_000;
/** 5-hour windows' worth of an account's week kept from new sessions until its reset nears. */
const WEEKLY_RESERVE_WINDOWS = 2;
/** How long before the weekly reset that reserve starts to be released, ms. */
const RESERVE_RELEASE_MS = 30 * 3_600_000;
/**
 * How long before the weekly reset that reserve is all released, ms: early enough for the 5-hour
 * windows to spend it before the reset (two windows' worth needs ten hours of work, plus a night's slack).
 */
const RESERVE_RELEASED_MS = 14 * 3_600_000;
/** Within how long of its weekly reset an account's 5-hour fit counts the bound work at the nearer-the-mean rate, ms. */
const MEAN_BOUND_WITHIN_MS = 24 * 3_600_000;

/**
 * The forecast of `a` for a session of `sessionTokensPerMs` (weighted tokens per ms) at `nowMs`
 * (epoch ms), over at most `horizonMs` (how long a session is expected to keep working, ms).
 */
export function forecastOf(a: PlanAccount, nowMs: number, sessionTokensPerMs: number, horizonMs: number): ForecastFigures {
  const m = a.metrics;
  const reserved = a.reserved ? weightedTokens(a.reserved) : 0;
  const bound = a.boundWork?.tokensPerMs ?? 0;
  // Per window: a window not ticking starts with the next request and runs its full length; unknown use reads as none.
  const span5 = Math.min(Number.isFinite(m.sessionResetMs) ? Math.max(0, m.sessionResetMs - nowMs) : FIVE_HOUR_MS, horizonMs);
  const capacity5 = Math.max(0, 1 - (m.sessionUsed ?? 0)) / expectedCostPerToken(a.learnedCosts?.fiveHour, '5h');
  const toReset7 = Number.isFinite(m.weeklyResetMs) ? Math.max(0, m.weeklyResetMs - nowMs) : SEVEN_DAY_MS;
  const span7 = Math.min(toReset7, horizonMs);
  const capacity7 = Math.max(0, 1 - (m.weeklyUsed ?? 0)) / expectedCostPerToken(a.learnedCosts?.sevenDay, '7d');
  // Near the weekly reset, the week left expires unless spent: the 5-hour fit takes the nearer-the-mean bound rate.
  const bound5 = toReset7 <= MEAN_BOUND_WITHIN_MS ? (a.boundWork?.meanTokensPerMs ?? bound) : bound;
  const free5h = capacity5 - reserved - bound5 * span5;
  const need5h = sessionTokensPerMs * span5;
  const free7d = capacity7 - reserved - bound * span7;
  const need7d = sessionTokensPerMs * span7;
  const reserve7d = weeklyReserve(a, nowMs);
  return {
    free5h,
    free7d,
    need5h,
    need7d,
    fits: need5h <= free5h && need7d <= free7d - reserve7d,
    reserve7d,
    weeklyResetMs: Number.isFinite(m.weeklyResetMs) ? m.weeklyResetMs : null,
  };
}

/**
 * What the fit and the shortfall order keep back of `a`'s week at `nowMs`, tokens: WEEKLY_RESERVE_WINDOWS
 * full 5-hour windows, released linearly from RESERVE_RELEASE_MS to RESERVE_RELEASED_MS before the weekly
 * reset. Without it, the soonest-reset-first order spent a week a day before its reset and left two
 * accounts whose 5-hour windows ran dry together (the refusals of docs/policies.md#forecast-on-the-generated-week).
 */
function weeklyReserve(a: PlanAccount, nowMs: number): number {
  const reset = a.metrics.weeklyResetMs;
  const toReset = Number.isFinite(reset) ? Math.max(0, reset - nowMs) : SEVEN_DAY_MS;
  const held = Math.min(1, Math.max(0, toReset - RESERVE_RELEASED_MS) / (RESERVE_RELEASE_MS - RESERVE_RELEASED_MS));
  return (WEEKLY_RESERVE_WINDOWS / expectedCostPerToken(a.learnedCosts?.fiveHour, '5h')) * held;
}

/** The smaller of the two windows' free − need (the week less its reserve), tokens: negative = the work does not fit by that much. */
const margin = (f: ForecastFigures): number => Math.min(f.free5h - f.need5h, f.free7d - f.reserve7d - f.need7d);
const resetKey = (f: ForecastFigures): number => f.weeklyResetMs ?? Infinity;

/** One eligible account with its forecast and the order's keys, computed once per plan (the sort compares these). */
interface Keyed {
  a: PlanAccount;
  f: ForecastFigures;
  fits: boolean;
  reset: number;
  margin: number;
}

/** The plan's scratch: each eligible account's forecast, by account and keyed in configured order. */
interface Memo {
  figures: Map<PlanAccount, ForecastFigures>;
  keyed: Keyed[];
}

function memoOf(input: OrderInput): Memo {
  const memo = input.memo as Memo | undefined;
  if (memo?.figures instanceof Map) return memo;
  const rate = input.sessionTokensPerMs ?? DEFAULT_SESSION_TOKENS_PER_MS;
  const horizon = input.sessionHorizonMs ?? input.policy.sessionAffinityIdleTtlMs;
  const figures = new Map<PlanAccount, ForecastFigures>();
  const keyed = new Array<Keyed>(input.eligible.length);
  for (let i = 0; i < input.eligible.length; i++) {
    const a = input.eligible[i];
    const f = forecastOf(a, input.nowMs, rate, horizon);
    figures.set(a, f);
    keyed[i] = { a, f, fits: f.fits, reset: resetKey(f), margin: margin(f) };
  }
  const out: Memo = { figures, keyed };
  input.memo = out;
  return out;
}

/** Which key separates `a` (ahead) from `b`, read from b's side; undefined when they tie. */
function separatedBy(fa: ForecastFigures, fb: ForecastFigures): SelectionReason | undefined {
  if (fa.fits !== fb.fits) return 'forecast_fits';
  if (fa.fits && resetKey(fa) !== resetKey(fb)) return 'forecast_expiry';
  if (margin(fa) !== margin(fb)) return 'forecast_margin';
  return undefined;
}

/** The order: the accounts the work fits (the week less its reserve) first, the soonest weekly reset among them first; then the larger margin; then configured order. */
function compare(x: Keyed, y: Keyed): number {
  if (x.fits !== y.fits) return x.fits ? -1 : 1;
  if (x.fits && x.reset !== y.reset) return x.reset < y.reset ? -1 : 1;
  if (x.margin !== y.margin) return x.margin > y.margin ? -1 : 1;
  return x.a.index - y.a.index;
}

export const forecast: Strategy = {
  name: 'forecast',
  summary: 'places a new session where its expected work uses the allowance that expires soonest, without starving the sessions already there',
  description:
    'A new session goes where its expected work fits before the windows reset, the soonest-expiring weekly allowance first, after the work already bound there and in flight; bound sessions stay until their account runs out (on-quota): uses expiring quota without piling a burst onto one account, but a forecast is an estimate. Affinity and spill apply.',
  modifiers: new Set(['affinity', 'spill']),
  bindsSessions: true,
  rebind: 'on-quota',
  readsForecast: true,
  order(input) {
    const keyed = memoOf(input).keyed.slice().sort(compare);
    const head = keyed.map((k) => k.a);
    const reason = keyed.length >= 2 ? (separatedBy(keyed[0].f, keyed[1].f) ?? 'insertion_order') : 'forecast_fits';
    return withTails(input, head, reason);
  },
  lossReason(winner, loser, input) {
    const { figures } = memoOf(input);
    const fw = figures.get(winner);
    const fl = figures.get(loser);
    return tailLoss(winner, loser, fw && fl ? (separatedBy(fw, fl) ?? 'insertion_order') : 'insertion_order');
  },
  figures: (a, input) => memoOf(input).figures.get(a),
};
