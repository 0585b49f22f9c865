/**
 * Stage 3, modify: affinity, then prefer-primary, then spill, each only when the strategy lets it
 * act (docs/routing.md#precedence-affinity-and-spill). Pure.
 */
import type { RoutingPolicy } from '../policy';
import type { SessionBinding } from '../affinity';
import { isEligible } from './filter';
import type { AffinityOutcome, AffinitySkipReason, PlanAccount, SelectionReason, SpillOutcome } from './types';
import type { Modifier } from './strategies/strategy';

/** What the modifiers did to the order stage's order. */
export interface Modified {
  order: PlanAccount[];
  reason: SelectionReason;
  affinity: AffinityOutcome;
  spill: SpillOutcome | null;
  /** A modifier moved another account to the front. */
  moved: boolean;
}

const NO_AFFINITY: AffinityOutcome = Object.freeze({ sessionBound: false, boundAccount: null, applied: false, skippedReason: 'disabled' });

/** The affinity outcome for a session whose binding is `binding`, among `ranked`. */
export function affinityOutcome(policy: RoutingPolicy, sessionId: string | null, binding: SessionBinding | undefined, ranked: readonly PlanAccount[]): AffinityOutcome {
  const bound = binding?.account ?? null;
  let skippedReason: AffinitySkipReason | null = null;
  if (!policy.sessionAffinity) skippedReason = 'disabled';
  else if (sessionId === null) skippedReason = 'no_session';
  else if (bound === null) skippedReason = 'expired';
  else {
    const account = ranked.find((a) => a.id === bound);
    if (!account || !account.metrics.usable) skippedReason = 'unusable';
    else if (account.metrics.sessionSaturated) skippedReason = 'session_saturated';
  }
  // One literal in record order (sessionBound, boundAccount, applied, skippedReason): this runs per request.
  return { sessionBound: bound !== null, boundAccount: bound, applied: skippedReason === null, skippedReason };
}

/**
 * Applies the modifiers in `allowed` to `ranked` (the order stage's order, fallbacks excluded).
 * `scoreReadsBinding`: the strategy's own order already weighs the binding (weighted); affinity is
 * reported but not applied twice, and counts as active only when the bound account came first.
 */
export function modify(
  ranked: PlanAccount[],
  reason: SelectionReason,
  allowed: ReadonlySet<Modifier>,
  scoreReadsBinding: boolean,
  policy: RoutingPolicy,
  sessionId: string | null,
  binding: SessionBinding | undefined,
): Modified {
  let affinity = NO_AFFINITY;
  let order = ranked;
  let moved = false;
  if (allowed.has('affinity')) {
    affinity = affinityOutcome(policy, sessionId, binding, ranked);
    if (affinity.applied) {
      moved = order[0]?.id !== affinity.boundAccount;
      order = moveToFront(order, affinity.boundAccount!);
      reason = 'session_affinity';
    }
  } else if (scoreReadsBinding) {
    const outcome = affinityOutcome(policy, sessionId, binding, ranked);
    const first = outcome.applied && order[0]?.id === outcome.boundAccount;
    affinity = first ? outcome : { ...outcome, applied: false };
  }
  if (allowed.has('prefer-primary') && policy.preferPrimary && policy.primaryAccount !== undefined) {
    const p = order.find((a) => a.id === policy.primaryAccount);
    if (p && isEligible(p.metrics) && order[0] !== p) {
      order = affinity.applied ? [order[0], p, ...order.slice(1).filter((a) => a !== p)] : moveToFront(order, p.id);
      if (!affinity.applied) {
        reason = 'preferred_primary';
        moved = true;
      }
    }
  }
  let spill: SpillOutcome | null = null;
  if (allowed.has('spill') && policy.spillInflight > 0 && !affinity.applied && order.length > 1) {
    const first = order[0];
    const n = policy.spillInflight;
    if (first.metrics.usable && first.inflight >= n) {
      const target = order.slice(1).find((a) => a.metrics.usable && a.inflight < n);
      if (target) {
        spill = { from: first.id, to: target.id, inflight: first.inflight };
        order = moveToFront(order, target.id);
        reason = 'spill_inflight';
        moved = true;
      }
    }
  }
  return { order, reason, affinity, spill, moved };
}

function moveToFront(order: readonly PlanAccount[], id: string): PlanAccount[] {
  const target = order.find((a) => a.id === id);
  return target ? [target, ...order.filter((a) => a !== target)] : [...order];
}
