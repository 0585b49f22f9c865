/**
 * Stage 1, filter: eligibility of each account for this request, as a verdict code with its
 * figures, from the same metrics the order stage reads (src/routing/metrics.ts). Pure.
 *
 * Eligible = usable and below the session soft limit. A usable account at the soft limit or at
 * its in-flight cap is not dropped: it is tried after the eligible ones (soft limit) or skipped by
 * the attempt loop while it stays at its cap, exactly as before the stages existed.
 */
import type { AccountMetrics } from '../metrics';
import type { RoutingPolicy } from '../policy';
import type { PlanAccount } from './types';
import type { FilterVerdict } from './verdict';

/** Whether affinity or prefer-primary may put this account first: it is usable and not session-saturated. */
export function isEligible(m: AccountMetrics): boolean {
  return m.usable && !m.sessionSaturated;
}

/** `a` is at `max-inflight-per-account` (a fallback account is never capped): the attempt loop passes it over, so no modifier may choose it. */
export function atInflightCap(a: PlanAccount, policy: RoutingPolicy): boolean {
  const cap = policy.maxInflightPerAccount;
  return cap > 0 && !a.fallback && a.inflight >= cap;
}

const ELIGIBLE: FilterVerdict = Object.freeze({ code: 'eligible' });
const SIGN_IN: FilterVerdict = Object.freeze({ code: 'needs_sign_in' });

const finite = (ms: number): number | null => (Number.isFinite(ms) ? ms : null);

/**
 * The verdict on `a` for a request of `modelFamily` under `policy`. The first failing condition
 * wins, in the order of `unusableReason` (sign-in, cooldown, exhausted window, scoped window).
 */
export function filterAccount(a: PlanAccount, policy: RoutingPolicy, modelFamily: string | undefined): FilterVerdict {
  const m = a.metrics;
  switch (m.unusableReason) {
    case 'needs_sign_in':
      return SIGN_IN;
    case 'cooldown':
      // Its quota reads recovered: the next request without a binding re-checks it.
      if (a.probe === 'recovery') return { code: 'recovery_probe', untilMs: finite(m.coolingUntilMs) };
      return { code: 'cooling', reason: a.cooldownReason ?? 'cooldown', untilMs: finite(m.coolingUntilMs) };
    case 'hard_saturated':
      return exhaustedWindow(m);
    case 'scoped_rejected':
      return { code: 'scoped_exhausted', family: modelFamily ?? 'the model', resetMs: finite(m.scopedResetMs) };
    case undefined:
      break;
  }
  if (m.softSaturated) return { code: 'soft_limit', used: m.sessionUsed ?? 0, resetMs: finite(m.sessionResetMs) };
  if (atInflightCap(a, policy)) return { code: 'over_cap', inflight: a.inflight, cap: policy.maxInflightPerAccount };
  return ELIGIBLE;
}

/** Which window exhausted a hard-saturated account: a full 5h window, a full 7d one, else the unified verdict. */
function exhaustedWindow(m: AccountMetrics): FilterVerdict {
  if (m.sessionUsed !== null && m.sessionUsed >= 1) return { code: 'window_exhausted', window: '5h', resetMs: finite(m.sessionResetMs) };
  if (m.weeklyUsed !== null && m.weeklyUsed >= 1) return { code: 'window_exhausted', window: '7d', resetMs: finite(m.weeklyResetMs) };
  // A rejection status below 100 %: the metrics do not say which window; the latest known reset clears it.
  const resets = [m.sessionResetMs, m.weeklyResetMs].filter(Number.isFinite);
  return { code: 'window_exhausted', window: 'unified', resetMs: resets.length ? Math.max(...resets) : null };
}

/** The filter's partition: eligible (usable, below the soft limit), soft (usable at the soft limit), unusable; each in configured order. */
export interface Partition {
  eligible: PlanAccount[];
  soft: PlanAccount[];
  unusable: PlanAccount[];
}

/** Splits the non-fallback accounts (in configured order) by eligibility. */
export function partition(accounts: readonly PlanAccount[]): Partition {
  const out: Partition = { eligible: [], soft: [], unusable: [] };
  for (const a of accounts) {
    if (!a.metrics.usable) out.unusable.push(a);
    else if (a.metrics.sessionSaturated) out.soft.push(a);
    else out.eligible.push(a);
  }
  return out;
}
