/**
 * Per-account routing metrics, computed per request at time `now` from the
 * account's quota snapshot and cooldown. Pure: no I/O, no clock of its own.
 *
 * Authority: docs/routing.md#per-account-metrics.
 * No account is ever without metrics: having no snapshot is one of the values they take.
 */
import type { Cooldown, QuotaSnapshot, QuotaWindow } from '../quota/types';
import { isCoolingDown } from '../quota/cooldown';
import { isAllowedStatus, isRejectionStatus as isRejection } from '../quota/status';
import { STALE_AFTER_MS as STALE_SNAPSHOT_MS } from '../quota/constants';

/** How much we know about an account's quota. */
export type QuotaFreshness = 'unknown' | 'fresh' | 'refresh_due' | 'stale_known';

/** Why an account cannot take a request now. */
export type UnusableReason = 'cooldown' | 'hard_saturated' | 'scoped_rejected' | 'needs_sign_in';

/** The inputs the metrics read for one account. */
export interface MetricsInput {
  snapshot: QuotaSnapshot | undefined;
  cooldown: Cooldown | undefined;
  /** The model-scoped cooldown of the request's model family, if one was set (src/quota/scopedCooldown.ts). */
  scopedCooldown?: Cooldown;
  /** The account cannot authenticate until a person signs in again. */
  needsSignIn?: boolean;
}

/** The policy knobs the metrics depend on. */
export interface MetricsParams {
  /** Session soft limit L as a fraction (default 0.97; 1 disables it). */
  sessionSoftLimit: number;
  /** Reset-bucket width T in ms (default 900 000). */
  sessionResetToleranceMs: number;
  /** Whether the policy lets an account run into paid overage. */
  allowOverage: boolean;
  /** Model family of the request (`sonnet`, `opus`, `haiku`) or undefined when unknown. */
  modelFamily: string | undefined;
}

/**
 * Everything the comparators look at. Reset times are epoch ms, `+Infinity`
 * when the window is not ticking; utilisation values are fractions.
 */
export interface AccountMetrics {
  usable: boolean;
  unusableReason?: UnusableReason;
  /** End of the active cooldown, epoch ms; `+Infinity` when none (and for needs-sign-in: never). */
  coolingUntilMs: number;
  freshness: QuotaFreshness;
  /** 0 for `fresh` and `stale_known`, 1 for `refresh_due`, 2 for `unknown`. */
  quotaEvidenceRank: 0 | 1 | 2;
  /** 5h utilisation (fraction); 0 when not ticking; null without a usable snapshot. */
  sessionUsed: number | null;
  /** 7d utilisation (fraction); 0 when not ticking; null when missing or no usable snapshot. */
  weeklyUsed: number | null;
  sessionResetMs: number;
  weeklyResetMs: number;
  /** floor(sessionResetMs / T); `+Infinity` when not ticking. */
  sessionResetBucket: number;
  /** weeklyUsed ?? −1. */
  weeklyUsedForSort: number;
  hardSaturated: boolean;
  softSaturated: boolean;
  /** hard or soft. */
  sessionSaturated: boolean;
  /** The request's model family has a scoped window observed within 15 min. */
  hasScopedWindow: boolean;
  scopedUsed: number | null;
  scopedResetMs: number;
  scopedSaturated: boolean;
  scopedRejected: boolean;
  overageEligible: boolean;
  /**
   * min(1 − sessionUsed, 1 − weeklyUsed); null without a usable snapshot or when a ticking 5h or
   * 7d window lacks its utilisation (docs/routing.md#sort-keys).
   */
  headroom: number | null;
}

/** A status is present and not allowed (stale evidence of this kind needs a refresh). */
function isNotAllowed(status: string | undefined): boolean {
  return status !== undefined && !isAllowedStatus(status);
}

/** A window is ticking when its reset lies in the future; otherwise it reads as renewed. */
function ticking(w: QuotaWindow | undefined, now: number): w is QuotaWindow & { resetAtMs: number } {
  return w !== undefined && w.resetAtMs !== undefined && w.resetAtMs > 0 && w.resetAtMs > now;
}

/** Freshness of a snapshot at `now` (docs/routing.md#freshness). */
export function snapshotFreshness(snapshot: QuotaSnapshot | undefined, now: number): QuotaFreshness {
  if (!snapshot) return 'unknown';
  if (now - snapshot.observedAtMs <= STALE_SNAPSHOT_MS) return 'fresh';
  const overageAvailable = overageSignalled(snapshot);
  const anyNotAllowed = isNotAllowed(snapshot.unifiedStatus) || isNotAllowed(snapshot.session?.status) || isNotAllowed(snapshot.weekly?.status);
  return !overageAvailable && anyNotAllowed ? 'refresh_due' : 'stale_known';
}

function overageSignalled(snapshot: QuotaSnapshot): boolean {
  const o = snapshot.overage;
  return !!o && (o.inUse === true || isAllowedStatus(o.status));
}

/**
 * Computes the metrics of one account for one request.
 *
 * @param input the account's snapshot, cooldown and sign-in state
 * @param params policy knobs and the request's model family
 * @param now epoch ms
 */
export function computeMetrics(input: MetricsInput, params: MetricsParams, now: number): AccountMetrics {
  const freshness = snapshotFreshness(input.snapshot, now);
  const quotaEvidenceRank: 0 | 1 | 2 = freshness === 'unknown' ? 2 : freshness === 'refresh_due' ? 1 : 0;
  // Routing disregards a refresh_due snapshot: the metrics come out as with no snapshot.
  const snap = freshness === 'unknown' || freshness === 'refresh_due' ? undefined : input.snapshot;

  const overageEligible = !!snap && params.allowOverage && overageSignalled(snap);

  let sessionUsed: number | null = null;
  let weeklyUsed: number | null = null;
  let sessionResetMs = Infinity;
  let weeklyResetMs = Infinity;
  let hardSaturated = false;
  let softSaturated = false;
  /** A ticking 5h window without utilisation: sessionUsed reads 0, but headroom cannot be computed. */
  let sessionUtilizationMissing = false;

  if (snap) {
    const s = snap.session;
    const w = snap.weekly;
    const sTicking = ticking(s, now);
    const wTicking = ticking(w, now);
    sessionUsed = sTicking ? (s.utilization ?? 0) : 0;
    sessionUtilizationMissing = sTicking && s.utilization === undefined;
    weeklyUsed = wTicking ? (w.utilization ?? null) : 0;
    if (sTicking) sessionResetMs = s.resetAtMs;
    if (wTicking) weeklyResetMs = w.resetAtMs;

    if (!overageEligible) {
      // A window that is not ticking reads as renewed, so only ticking windows can reject.
      const unifiedRejected = snap.unifiedStatus?.trim().toLowerCase() === 'rejected' && unifiedStillBinding(snap, now);
      hardSaturated = (sTicking && (isRejection(s.status) || (s.utilization ?? 0) >= 1)) || (wTicking && (isRejection(w.status) || (w.utilization ?? 0) >= 1)) || unifiedRejected;
      softSaturated = !hardSaturated && sTicking && sessionUsed >= params.sessionSoftLimit;
    }
  }

  const scoped = scopedWindow(snap, params.modelFamily, now);
  const scopedTicking = ticking(scoped, now);
  const scopedUsed = scoped ? (scopedTicking ? (scoped.utilization ?? 0) : 0) : null;
  // A scoped rejection the upstream answered with stays in force until its reset, however old its window.
  const scopedCooling = isCoolingDown(input.scopedCooldown, now);
  const scopedResetMs = scopedCooling ? Math.max(input.scopedCooldown!.untilMs, scopedTicking ? scoped.resetAtMs : 0) : scopedTicking ? scoped.resetAtMs : Infinity;
  const scopedRejected = scopedCooling || (!!scoped && scopedTicking && !overageEligible && (isRejection(scoped.status) || (scoped.utilization ?? 0) >= 1));
  const scopedSaturated = !!scoped && scopedTicking && (scopedUsed ?? 0) >= params.sessionSoftLimit;

  const cooling = isCoolingDown(input.cooldown, now);
  const coolingUntilMs = input.needsSignIn ? Infinity : cooling ? input.cooldown!.untilMs : Infinity;
  let unusableReason: UnusableReason | undefined;
  if (input.needsSignIn) unusableReason = 'needs_sign_in';
  else if (cooling) unusableReason = 'cooldown';
  else if (hardSaturated) unusableReason = 'hard_saturated';
  else if (scopedRejected) unusableReason = 'scoped_rejected';

  const headroom = sessionUsed === null || weeklyUsed === null || sessionUtilizationMissing ? null : Math.min(1 - sessionUsed, 1 - weeklyUsed);

  return {
    usable: unusableReason === undefined,
    unusableReason,
    coolingUntilMs,
    freshness,
    quotaEvidenceRank,
    sessionUsed,
    weeklyUsed,
    sessionResetMs,
    weeklyResetMs,
    sessionResetBucket: sessionResetMs === Infinity ? Infinity : Math.floor(sessionResetMs / params.sessionResetToleranceMs),
    weeklyUsedForSort: weeklyUsed ?? -1,
    hardSaturated,
    softSaturated,
    sessionSaturated: hardSaturated || softSaturated,
    hasScopedWindow: !!scoped,
    scopedUsed,
    scopedResetMs,
    scopedSaturated,
    scopedRejected,
    overageEligible,
    headroom,
  };
}

/** The unified verdict counts only while the window it names has not reset. */
function unifiedStillBinding(snap: QuotaSnapshot, now: number): boolean {
  return snap.unifiedResetAtMs === undefined || snap.unifiedResetAtMs <= 0 || snap.unifiedResetAtMs > now;
}

/** The freshest scoped window for the family observed within 15 min, if any. */
function scopedWindow(snap: QuotaSnapshot | undefined, family: string | undefined, now: number) {
  if (!snap || !family) return undefined;
  const w = snap.scoped[family];
  if (!w || now - w.observedAtMs > STALE_SNAPSHOT_MS) return undefined;
  return w;
}
