/**
 * Route planning: metrics → ranking → affinity / primary → spill, returning the
 * order a request tries and the reason for every placement. Pure.
 *
 * Authority: docs/routing.md#strategies and
 * docs/routing.md#precedence-affinity-and-spill.
 */
import type { AccountMetrics } from './metrics';
import { DEFAULT_POLICY, type RoutingPolicy } from './policy';
import { comparatorFor, rankAccounts, rankContextFor, type RankCandidate, type RankContext, type RankingReason } from './ranking';
import type { SessionBinding } from './affinity';

/** One enabled account offered to the planner. */
export interface PlanAccount extends RankCandidate {
  /** Pay-as-you-go fallback: tried after every other account, never bound, not counted for spill. */
  fallback: boolean;
  /** Requests in flight on this account now (leases). */
  inflight: number;
}

/** What the planner needs besides the accounts. */
export interface PlanInput {
  /** Enabled accounts in configured order. */
  accounts: readonly PlanAccount[];
  policy: RoutingPolicy;
  sessionId: string | null;
  /** The session's live binding (already idle-TTL checked), if any. */
  binding: SessionBinding | undefined;
  /** For round-robin: how many requests have started before this one. */
  roundRobinCursor: number;
}

/** Why the first account was chosen. */
export type SelectionReason =
  RankingReason | 'single_account' | 'no_account' | 'session_affinity' | 'preferred_primary' | 'spill_inflight' | 'round_robin' | 'configured_order' | 'routing_policy_error';

/** Why affinity did not place the bound account first. */
export type AffinitySkipReason = 'unusable' | 'session_saturated' | 'expired' | 'no_session' | 'disabled';

/** The affinity part of a decision. */
export interface AffinityOutcome {
  sessionBound: boolean;
  boundAccount: string | null;
  applied: boolean;
  skippedReason: AffinitySkipReason | null;
}

/** Spill, when it moved the first choice. */
export interface SpillOutcome {
  from: string;
  to: string;
  /** In-flight count of `from` when it spilled. */
  inflight: number;
}

/** How one account fared in a plan. */
export interface CandidateVerdict {
  account: string;
  /** Position in the final try order, 0-based. */
  rank: number;
  verdict: 'selected' | 'ranked_below' | 'unusable';
  /** For `selected`: the selection reason; otherwise why it lost (comparator step or unusable reason). */
  reason: string;
}

/** The planner's answer. */
export interface RoutePlan {
  /** Accounts in the order to try (unusable ones last; the attempt loop skips them). */
  order: PlanAccount[];
  selectionReason: SelectionReason;
  /** The pure ranking order (before affinity, primary and spill): what `replay` compares. */
  rankingOrder: string[];
  affinity: AffinityOutcome;
  spill: SpillOutcome | null;
  verdicts: CandidateVerdict[];
  /** Set when a policy step threw and the plan fell back to plain expiry-first. */
  policyError: string | null;
}

/** Eligible for affinity and prefer-primary: usable and not session-saturated. */
export function isEligible(m: AccountMetrics): boolean {
  return m.usable && !m.sessionSaturated;
}

/** Plans one request. Never throws: a failing policy step yields plain expiry-first. */
export function planRoute(input: PlanInput): RoutePlan {
  try {
    return planWithPolicy(input);
  } catch (err) {
    return planDefault(input, err instanceof Error ? `${err.name}: ${err.message}` : String(err));
  }
}

function planWithPolicy(input: PlanInput): RoutePlan {
  const { policy } = input;
  const primary = input.accounts.filter((a) => !a.fallback);
  const fallbacks = input.accounts.filter((a) => a.fallback);

  if (policy.strategy === 'round-robin') return planRoundRobin(input, primary, fallbacks);

  let ranked: PlanAccount[];
  let reason: SelectionReason;
  if (policy.quotaRouting) {
    const r = rankAccounts(primary, policy.accountRanking);
    ranked = r.order as PlanAccount[];
    reason = r.reason;
  } else {
    ranked = configuredOrder(primary);
    reason = ranked.length > 1 && ranked[0].metrics.usable && !ranked[1].metrics.usable ? 'availability' : 'configured_order';
  }
  const rankingOrder = ranked.map((a) => a.id);

  // Precedence: bound account → configured primary → ranking order.
  const affinity = affinityOutcome(input, ranked);
  let order = ranked;
  if (affinity.applied) {
    order = moveToFront(order, affinity.boundAccount!);
    reason = 'session_affinity';
  }
  if (policy.preferPrimary && policy.primaryAccount !== undefined) {
    const p = order.find((a) => a.id === policy.primaryAccount);
    if (p && isEligible(p.metrics) && order[0] !== p) {
      order = affinity.applied ? [order[0], p, ...order.slice(1).filter((a) => a !== p)] : moveToFront(order, p.id);
      if (!affinity.applied) reason = 'preferred_primary';
    }
  }

  let spill: SpillOutcome | null = null;
  if (policy.spillInflight > 0 && !affinity.applied && order.length > 1) {
    const first = order[0];
    const n = policy.spillInflight;
    if (first.metrics.usable && first.inflight >= n) {
      const target = order.slice(1).find((a) => a.metrics.usable && a.inflight < n);
      if (target) {
        spill = { from: first.id, to: target.id, inflight: first.inflight };
        order = moveToFront(order, target.id);
        reason = 'spill_inflight';
      }
    }
  }

  const full = [...order, ...configuredOrder(fallbacks)];
  if (full.length === 0) reason = 'no_account';
  else if (order.length === 0 && fallbacks.length > 0) reason = 'configured_order';
  return finish(full, reason, rankingOrder, affinity, spill, null, input);
}

function planRoundRobin(input: PlanInput, primary: PlanAccount[], fallbacks: PlanAccount[]): RoutePlan {
  const usable = primary.filter((a) => a.metrics.usable);
  let order: PlanAccount[];
  if (usable.length === 0) {
    order = configuredOrder(primary);
  } else {
    const start = input.roundRobinCursor % usable.length;
    const rotated = [...usable.slice(start), ...usable.slice(0, start)];
    order = [...rotated, ...primary.filter((a) => !a.metrics.usable)];
  }
  const affinity: AffinityOutcome = { sessionBound: false, boundAccount: null, applied: false, skippedReason: 'disabled' };
  const full = [...order, ...configuredOrder(fallbacks)];
  const reason: SelectionReason = full.length === 0 ? 'no_account' : 'round_robin';
  return finish(
    full,
    reason,
    configuredOrder(primary).map((a) => a.id),
    affinity,
    null,
    null,
    input,
  );
}

/**
 * Plain expiry-first with no modifiers: the failure-mode plan. It reads nothing of the policy or
 * the binding beyond what cannot throw, and explains its verdicts with expiry-first (the ranking it
 * used), never with the configured ranking that may be the step that failed.
 */
function planDefault(input: PlanInput, error: string): RoutePlan {
  const primary = input.accounts.filter((a) => !a.fallback);
  const ranked = rankAccounts(primary, 'expiry-first').order as PlanAccount[];
  const full = [...ranked, ...configuredOrder(input.accounts.filter((a) => a.fallback))];
  let boundAccount: string | null = null;
  try {
    boundAccount = input.binding?.account ?? null;
  } catch {
    // a binding that cannot be read is reported as no binding
  }
  const affinity: AffinityOutcome = { sessionBound: boundAccount !== null, boundAccount, applied: false, skippedReason: null };
  const plainInput: PlanInput = { accounts: input.accounts, policy: DEFAULT_POLICY, sessionId: null, binding: undefined, roundRobinCursor: 0 };
  return finish(
    full,
    full.length ? 'routing_policy_error' : 'no_account',
    ranked.map((a) => a.id),
    affinity,
    null,
    error,
    plainInput,
  );
}

function affinityOutcome(input: PlanInput, ranked: readonly PlanAccount[]): AffinityOutcome {
  const bound = input.binding?.account ?? null;
  let skippedReason: AffinitySkipReason | null = null;
  if (!input.policy.sessionAffinity) skippedReason = 'disabled';
  else if (input.sessionId === null) skippedReason = 'no_session';
  else if (bound === null) skippedReason = 'expired';
  else {
    const account = ranked.find((a) => a.id === bound);
    if (!account || !account.metrics.usable) skippedReason = 'unusable';
    else if (account.metrics.sessionSaturated) skippedReason = 'session_saturated';
  }
  // One literal in record order (sessionBound, boundAccount, applied, skippedReason): this runs per request.
  return { sessionBound: bound !== null, boundAccount: bound, applied: skippedReason === null, skippedReason };
}

function configuredOrder<T extends PlanAccount>(accounts: readonly T[]): T[] {
  // Usable first keeps the attempt loop from walking dead accounts; then configured order, primary first.
  return [...accounts].sort((a, b) => Number(b.metrics.usable) - Number(a.metrics.usable) || Number(b.isPrimary) - Number(a.isPrimary) || a.index - b.index);
}

function moveToFront(order: readonly PlanAccount[], id: string): PlanAccount[] {
  const target = order.find((a) => a.id === id);
  return target ? [target, ...order.filter((a) => a !== target)] : [...order];
}

function finish(
  order: PlanAccount[],
  selectionReason: SelectionReason,
  rankingOrder: string[],
  affinity: AffinityOutcome,
  spill: SpillOutcome | null,
  policyError: string | null,
  input: PlanInput,
): RoutePlan {
  const winner = order[0];
  const ctx = rankContextFor(input.accounts.filter((a) => !a.fallback));
  const rankingPos = new Map(rankingOrder.map((id, i) => [id, i]));
  const verdicts = order.map((a, rank): CandidateVerdict => {
    if (rank === 0) return { account: a.id, rank, verdict: 'selected', reason: selectionReason };
    if (!a.metrics.usable) return { account: a.id, rank, verdict: 'unusable', reason: a.metrics.unusableReason ?? 'unusable' };
    if (a.fallback) return { account: a.id, rank, verdict: 'ranked_below', reason: 'fallback_last' };
    // An account the ranking put above the winner lost to a modifier (affinity, primary, spill).
    const aboveWinner = (rankingPos.get(a.id) ?? Infinity) < (rankingPos.get(winner.id) ?? Infinity);
    const reason = aboveWinner || winner.fallback ? selectionReason : compareExpiryOrPolicy(winner, a, input, ctx);
    return { account: a.id, rank, verdict: 'ranked_below', reason };
  });
  return { order, selectionReason, rankingOrder, affinity, spill, verdicts, policyError };
}

function compareExpiryOrPolicy(winner: PlanAccount, loser: PlanAccount, input: PlanInput, ctx: RankContext): string {
  if (input.policy.strategy === 'round-robin') return 'round_robin';
  if (!input.policy.quotaRouting) return 'configured_order';
  return comparatorFor(input.policy.accountRanking)(winner, loser, ctx).reason;
}
