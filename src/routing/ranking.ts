/**
 * Account rankings: `expiry-first` (the default, exactly as
 * docs/routing.md#expiry-first specifies) and `headroom-first`.
 * Pure: a function of the candidates and their metrics; no clock, no I/O.
 *
 * Every comparator step that separates two accounts names its reason; the
 * reason that separates rank 0 from rank 1 becomes the decision's
 * `selectionReason`. Values are compared with `<`/`>` only — never subtracted —
 * because `Infinity - Infinity` is NaN.
 */
import type { AccountMetrics } from './metrics';

/** The two rankings an operator can choose. */
export type AccountRanking = 'expiry-first' | 'headroom-first';

/**
 * Each ranking in one sentence (Markdown), in the setting's enum order: the Choose Routing
 * Strategy quick pick shows it, and package.json's `markdownEnumDescriptions` for
 * `claudeRouter.routing.accountRanking` holds the same text (a test keeps them equal).
 */
export const ACCOUNT_RANKINGS: Readonly<Record<AccountRanking, string>> = {
  'expiry-first': 'Spend the allowance that expires first (soonest weekly reset, then soonest 5-hour reset, then the fuller account).',
  'headroom-first': 'Most remaining headroom first: min(1 \u2212 5h used, 1 \u2212 7d used).',
};

/** Reasons a comparator step gives for putting one account before another. */
export const RANKING_REASONS = [
  'availability',
  'cooldown_recovery',
  'quota_evidence',
  'session_headroom',
  'scoped_headroom',
  'session_reset',
  'weekly_reset',
  'scoped_utilization',
  'weekly_utilization',
  'headroom',
  'configured_primary',
  'insertion_order',
] as const;
export type RankingReason = (typeof RANKING_REASONS)[number];

/** One account as the ranking sees it. */
export interface RankCandidate {
  /** The account's label (unique). */
  id: string;
  /** Position in the configured account order (insertion order), 0-based. */
  index: number;
  /** Whether this is the configured primary account. */
  isPrimary: boolean;
  metrics: AccountMetrics;
}

/** Facts about the whole candidate set that a step may depend on (keeps the order transitive). */
export interface RankContext {
  /** True when each candidate has a scoped window for the requested model (enables step 7). */
  allHaveScopedWindow: boolean;
}

/** A comparison result: `order < 0` puts `a` first; `reason` names the separating step. */
export interface Comparison {
  order: number;
  reason: RankingReason;
}

/** The result of ranking a candidate set. */
export interface RankResult {
  order: RankCandidate[];
  /** Reason that placed rank 0 ahead of rank 1; `single_account` with one candidate, `no_account` with none. */
  reason: RankingReason | 'single_account' | 'no_account';
}

type Step = (a: RankCandidate, b: RankCandidate, ctx: RankContext) => Comparison | undefined;

function lower(a: number, b: number, reason: RankingReason): Comparison | undefined {
  return a < b ? { order: -1, reason } : a > b ? { order: 1, reason } : undefined;
}
function higher(a: number, b: number, reason: RankingReason): Comparison | undefined {
  return a > b ? { order: -1, reason } : a < b ? { order: 1, reason } : undefined;
}
function trueFirst(a: boolean, b: boolean, reason: RankingReason): Comparison | undefined {
  return a === b ? undefined : { order: a ? -1 : 1, reason };
}

const insertionOrder: Step = (a, b) => lower(a.index, b.index, 'insertion_order');
const configuredPrimary: Step = (a, b) => trueFirst(a.isPrimary, b.isPrimary, 'configured_primary');

/**
 * Steps 1–5, shared by both rankings. Returns a comparison, or undefined when
 * the pair is still tied. For two unusable accounts it always decides (step 2).
 */
function compareCommonSteps(a: RankCandidate, b: RankCandidate): Comparison | undefined {
  const ma = a.metrics;
  const mb = b.metrics;
  const availability = trueFirst(ma.usable, mb.usable, 'availability');
  if (availability) return availability;
  if (!ma.usable) {
    // Both unusable: nothing but recovery time and insertion order is compared.
    return lower(ma.coolingUntilMs, mb.coolingUntilMs, 'cooldown_recovery') ?? insertionOrder(a, b, UNUSED_CTX) ?? TIE;
  }
  return (
    lower(ma.quotaEvidenceRank, mb.quotaEvidenceRank, 'quota_evidence') ??
    trueFirst(!ma.sessionSaturated, !mb.sessionSaturated, 'session_headroom') ??
    trueFirst(!ma.scopedSaturated, !mb.scopedSaturated, 'scoped_headroom')
  );
}

const TIE: Comparison = { order: 0, reason: 'insertion_order' };
const UNUSED_CTX: RankContext = { allHaveScopedWindow: false };

/** Step 6: resets, one lexicographic key whose order depends on saturation (equal for both here). */
const resets: Step = (a, b) => {
  const ma = a.metrics;
  const mb = b.metrics;
  if (ma.sessionSaturated && mb.sessionSaturated) {
    // Both are stuck until their 5h windows come back, so the 5h reset decides first.
    return lower(ma.sessionResetBucket, mb.sessionResetBucket, 'session_reset') ?? lower(ma.weeklyResetMs, mb.weeklyResetMs, 'weekly_reset');
  }
  return lower(ma.weeklyResetMs, mb.weeklyResetMs, 'weekly_reset') ?? lower(ma.sessionResetBucket, mb.sessionResetBucket, 'session_reset');
};

const scopedUtilization: Step = (a, b, ctx) => (ctx.allHaveScopedWindow ? higher(a.metrics.scopedUsed ?? -1, b.metrics.scopedUsed ?? -1, 'scoped_utilization') : undefined);

const weeklyUtilization: Step = (a, b) => higher(a.metrics.weeklyUsedForSort, b.metrics.weeklyUsedForSort, 'weekly_utilization');

/** Headroom known before unknown, then more headroom first. */
const headroom: Step = (a, b) => {
  const ha = a.metrics.headroom;
  const hb = b.metrics.headroom;
  if (ha === null || hb === null) return trueFirst(ha !== null, hb !== null, 'headroom');
  return higher(ha, hb, 'headroom');
};
const weeklyReset: Step = (a, b) => lower(a.metrics.weeklyResetMs, b.metrics.weeklyResetMs, 'weekly_reset');

const EXPIRY_FIRST_TAIL: Step[] = [resets, scopedUtilization, weeklyUtilization, configuredPrimary, insertionOrder];
const HEADROOM_FIRST_TAIL: Step[] = [headroom, weeklyReset, configuredPrimary, insertionOrder];

function compareWith(tail: Step[], a: RankCandidate, b: RankCandidate, ctx: RankContext): Comparison {
  const common = compareCommonSteps(a, b);
  if (common) return common;
  for (const step of tail) {
    const c = step(a, b, ctx);
    if (c) return c;
  }
  return TIE;
}

/** The expiry-first comparator (docs/routing.md#expiry-first, steps 1–10). */
export function compareExpiryFirst(a: RankCandidate, b: RankCandidate, ctx: RankContext): Comparison {
  return compareWith(EXPIRY_FIRST_TAIL, a, b, ctx);
}

/** The headroom-first comparator (docs/routing.md#headroom-first). */
export function compareHeadroomFirst(a: RankCandidate, b: RankCandidate, ctx: RankContext): Comparison {
  return compareWith(HEADROOM_FIRST_TAIL, a, b, ctx);
}

/** The comparator for a ranking name. */
export function comparatorFor(ranking: AccountRanking): typeof compareExpiryFirst {
  return ranking === 'headroom-first' ? compareHeadroomFirst : compareExpiryFirst;
}

/** The candidate-set facts for `RankContext`. */
export function rankContextFor(candidates: readonly RankCandidate[]): RankContext {
  return { allHaveScopedWindow: candidates.length > 0 && candidates.every((c) => c.metrics.hasScopedWindow) };
}

/**
 * Orders candidates by a ranking and names the reason that placed rank 0.
 * Deterministic and total: ties end at insertion order.
 */
export function rankAccounts(candidates: readonly RankCandidate[], ranking: AccountRanking): RankResult {
  const ctx = rankContextFor(candidates);
  const compare = comparatorFor(ranking);
  const order = [...candidates].sort((a, b) => compare(a, b, ctx).order);
  if (order.length === 0) return { order, reason: 'no_account' };
  if (order.length === 1) return { order, reason: 'single_account' };
  return { order, reason: compare(order[0], order[1], ctx).reason };
}
