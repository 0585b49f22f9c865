/**
 * Route planning in three stages — filter (eligibility, with a verdict per account), order (the
 * configured strategy from the catalogue), modify (affinity with the sticky thresholds,
 * prefer-primary, prefer-earlier-reset, spill, as the strategy allows) — composed by `planRoute`, the one function the engine calls. Pure.
 *
 * Authority: docs/routing.md#strategies, docs/routing.md#precedence-affinity-and-spill and
 * docs/strategies.md.
 */
import { DEFAULT_POLICY } from './policy';
import { rankAccounts } from './ranking';
import { filterAccount, partition } from './planner/filter';
import { modify, type StickyMove } from './planner/modify';
import { hash32, seededRandom } from './planner/random';
import { configuredOrder } from './planner/strategies/common';
import { strategyFor } from './planner/strategies/registry';
import type { OrderInput, Strategy } from './planner/strategies/strategy';
import type { AffinityOutcome, CandidateVerdict, DecidingStage, PlanAccount, PlanInput, RoutePlan, SelectionReason, SpillOutcome, StrategyInputs } from './planner/types';

export type {
  AffinityOutcome,
  AffinitySkipReason,
  CandidateVerdict,
  DecidingStage,
  PlanAccount,
  PlanInput,
  ProbeOutcome,
  RoutePlan,
  SelectionReason,
  SpillOutcome,
  StrategyInputs,
  StrategyReason,
} from './planner/types';
export { isEligible } from './planner/filter';

/** Plans one request. Never throws: a failing policy step yields plain expiry-first. */
export function planRoute(input: PlanInput): RoutePlan {
  try {
    return planWithPolicy(input);
  } catch (err) {
    return planDefault(input, err instanceof Error ? `${err.name}: ${err.message}` : String(err));
  }
}

const MODIFIER_REASONS: ReadonlySet<SelectionReason> = new Set([
  'session_affinity',
  'preferred_primary',
  'spill_inflight',
  'sticky_reallocation',
  'earlier_reset',
  'recovery_probe',
  'evidence_probe',
]);

/** The order stage's input for `input` (fallbacks excluded). */
export function orderInput(input: PlanInput): OrderInput {
  const all = input.accounts.filter((a) => !a.fallback);
  const { eligible, soft, unusable } = partition(all);
  const requestId = input.requestId ?? '';
  // Both are computed only when a strategy draws or breaks a tie: fill-first pays nothing for them.
  let draw: (() => number) | undefined;
  let sessionHash: number | undefined;
  return {
    eligible,
    soft,
    unusable,
    all,
    policy: input.policy,
    random: () => (draw ??= seededRandom(hash32(requestId)))(),
    sessionHash: () => (sessionHash ??= hash32(input.sessionId ?? requestId)),
    binding: input.binding,
    roundRobinCursor: input.roundRobinCursor,
    nowMs: input.nowMs ?? 0,
    sessionTokensPerMs: input.sessionTokensPerMs,
    sessionHorizonMs: input.sessionHorizonMs,
    memo: undefined,
  };
}

function planWithPolicy(input: PlanInput): RoutePlan {
  const strategy = strategyFor(input.policy.strategy);
  const oi = orderInput(input);
  const ordered = strategy.order(oi);
  const rankingOrder = ordered.rankingOrder ?? ordered.order.map((a) => a.id);
  const m = modify(
    ordered.order,
    ordered.reason,
    strategy.modifiers,
    strategy.bindsSessions && !strategy.modifiers.has('affinity'),
    input.policy,
    input.sessionId,
    input.binding,
    input.nowMs ?? 0,
  );
  const fallbacks = strategy.noFailover ? [] : configuredOrder(input.accounts.filter((a) => a.fallback));
  const full = fallbacks.length ? [...m.order, ...fallbacks] : m.order;
  let reason = m.reason;
  if (full.length === 0) reason = 'no_account';
  else if (reason === 'no_account' || (m.order.length === 0 && reason !== 'round_robin')) reason = 'configured_order';
  const decidedBy: DecidingStage = MODIFIER_REASONS.has(reason) ? 'modify' : oi.eligible.length + oi.soft.length >= 2 ? 'order' : 'filter';
  const plan = finish(full, reason, rankingOrder, m.affinity, m.spill, null, input, strategy, oi, decidedBy, m.sticky);
  if (recordsStrategyInputs(strategy.name)) plan.strategyInputs = strategyInputs(input);
  if (m.probe) plan.probe = m.probe;
  return plan;
}

/** Whether a plan under `strategy` records its {@link StrategyInputs}: every strategy but the default, whose inputs are all in the candidates. */
export function recordsStrategyInputs(strategy: string): boolean {
  return strategy !== 'fill-first';
}

/** The inputs `replay` needs to plan a non-default strategy's request again. */
function strategyInputs(input: PlanInput): StrategyInputs {
  const p = input.policy;
  const accounts: StrategyInputs['accounts'] = {};
  for (const a of input.accounts) {
    // Only an account with something to record gets an entry; the keys in this order (the record's JSON).
    if (
      a.priority === undefined &&
      a.costTier === undefined &&
      a.planSize === undefined &&
      a.latencyFactor === undefined &&
      a.recentErrorRate === undefined &&
      a.reserved === undefined &&
      a.learnedCosts === undefined &&
      a.boundWork === undefined
    )
      continue;
    const read: StrategyInputs['accounts'][string] = {};
    if (a.priority !== undefined) read.priority = a.priority;
    if (a.costTier !== undefined) read.costTier = a.costTier;
    if (a.planSize !== undefined) read.planSize = a.planSize;
    if (a.latencyFactor !== undefined) read.latencyFactor = a.latencyFactor;
    if (a.recentErrorRate !== undefined) read.recentErrorRate = a.recentErrorRate;
    if (a.reserved !== undefined) read.reserved = a.reserved;
    if (a.learnedCosts !== undefined) read.learnedCosts = a.learnedCosts;
    if (a.boundWork !== undefined) read.boundWork = a.boundWork;
    accounts[a.id] = read;
  }
  return {
    nowMs: input.nowMs ?? 0,
    roundRobinCursor: input.roundRobinCursor,
    maxInflightPerAccount: p.maxInflightPerAccount,
    relativeAvailabilityTopK: p.relativeAvailabilityTopK,
    relativeAvailabilityPower: p.relativeAvailabilityPower,
    singleAccountLabel: p.singleAccountLabel ?? null,
    weightedPreset: p.weightedPreset,
    weights: { ...p.weights },
    accounts,
    ...(input.sessionTokensPerMs !== undefined && { sessionTokensPerMs: input.sessionTokensPerMs }),
    ...(input.sessionHorizonMs !== undefined && { sessionHorizonMs: input.sessionHorizonMs }),
  };
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
  const strategy = strategyFor('fill-first');
  return finish(
    full,
    full.length ? 'routing_policy_error' : 'no_account',
    ranked.map((a) => a.id),
    affinity,
    null,
    error,
    plainInput,
    strategy,
    orderInput(plainInput),
    'policy_error',
  );
}

function finish(
  order: PlanAccount[],
  selectionReason: SelectionReason,
  rankingOrder: string[],
  affinity: AffinityOutcome,
  spill: SpillOutcome | null,
  policyError: string | null,
  input: PlanInput,
  strategy: Strategy,
  oi: OrderInput,
  decidedBy: DecidingStage,
  sticky: StickyMove | null = null,
): RoutePlan {
  const winner = order[0];
  // The accounts the order stage put above the winner (usually none: the winner is the order's first).
  const winnerPos = winner === undefined ? -1 : rankingOrder.indexOf(winner.id);
  const aboveWinnerIds = new Set(winnerPos === -1 ? rankingOrder : rankingOrder.slice(0, winnerPos));
  const verdicts = order.map((a, rank): CandidateVerdict => {
    const v = verdictOf(a, rank);
    const forecast = strategy.figures && a.metrics.usable && !a.fallback ? strategy.figures(a, oi) : undefined;
    if (forecast) v.forecast = forecast;
    return v;
  });
  function verdictOf(a: PlanAccount, rank: number): CandidateVerdict {
    // The account a session moved off carries the sticky threshold's verdict, with its figures.
    const filter = sticky?.from === a.id ? sticky.verdict : filterAccount(a, input.policy, input.modelFamily);
    if (rank === 0) return { account: a.id, rank, verdict: 'selected', reason: selectionReason, filter };
    if (!a.metrics.usable) return { account: a.id, rank, verdict: 'unusable', reason: a.metrics.unusableReason ?? 'unusable', filter };
    if (a.fallback) return { account: a.id, rank, verdict: 'ranked_below', reason: 'fallback_last', filter };
    // An account the order stage put above the winner lost to a modifier (affinity, primary, spill).
    // The account a session left over a sticky threshold lost to that move, wherever the order put it.
    const aboveWinner = sticky?.from === a.id || aboveWinnerIds.has(a.id);
    const reason = aboveWinner || winner.fallback ? selectionReason : strategy.lossReason(winner, a, oi);
    return { account: a.id, rank, verdict: 'ranked_below', reason, filter };
  }
  return { order, selectionReason, rankingOrder, affinity, spill, verdicts, policyError, strategy: strategy.name, decidedBy };
}
