/**
 * The planner's types: what it is given (PlanInput), what each stage returns, and the plan.
 * Authority: docs/routing.md#precedence-affinity-and-spill and docs/strategies.md.
 */
import { RANKING_REASONS, type RankCandidate } from '../ranking';
import type { RoutingPolicy } from '../policy';
import type { SessionBinding } from '../affinity';
import type { FilterVerdict, ForecastFigures } from './verdict';
import type { ProbeKind } from '../probe';
import type { AccountLearnedCosts } from '../../quota/learnedCosts';
import type { BoundWork } from '../sessionWork';

/** One enabled account offered to the planner. */
export interface PlanAccount extends RankCandidate {
  /** Pay-as-you-go fallback: tried after every other account, never bound, not counted for spill. */
  fallback: boolean;
  /** Requests in flight on this account now (leases). */
  inflight: number;
  /** Outstanding cost reservations on this account (requests in flight), in estimated tokens by kind; absent = none. */
  reserved?: { inputTokens: number; cacheReadTokens: number; cacheWriteTokens: number; outputTokens: number };
  /** The active cooldown's reason (`throttle`, `overloaded`, …), when the account is cooling down. */
  cooldownReason?: string;
  /** `priority` from the account's configuration (integer, higher first; default 0). Used by `weighted`. */
  priority?: number;
  /** `cost-tier` from the account's configuration (1 = cheapest; default 1). Used by `weighted`. */
  costTier?: number;
  /** Share of recent attempts that failed, fraction 0–1 (default 0). Used by `weighted`. */
  recentErrorRate?: number;
  /** `plan-size` from the account's configuration: its allowance relative to the others'. Used by `capacity-weighted`. */
  planSize?: number;
  /** Draw-weight factor of the latency modifier, 0.5–1 (default 1: not slower than the fleet). */
  latencyFactor?: number;
  /** It may take a probe now (src/routing/probe.ts): set for Messages calls only, by the proxy's probe table. */
  probe?: ProbeKind;
  /** What was learned of its windows' cost per weighted token (src/quota/learnedCosts.ts); absent = nothing yet. Read by `forecast`. */
  learnedCosts?: AccountLearnedCosts;
  /** The expected work of the live sessions bound to it (src/routing/sessionWork.ts); absent = none. Read by `forecast`. */
  boundWork?: BoundWork;
}

/** What the planner needs besides the accounts. */
export interface PlanInput {
  /** Enabled accounts in configured order. */
  accounts: readonly PlanAccount[];
  policy: RoutingPolicy;
  /** The session key (or its hash), null without one. */
  sessionId: string | null;
  /** The session's live binding (already idle-TTL checked), if any. */
  binding: SessionBinding | undefined;
  /** For round-robin: how many requests have started before this one. */
  roundRobinCursor: number;
  /** The request id: the seed of every random draw, so a decision can be reproduced. '' when absent. */
  requestId?: string;
  /** The planning time, epoch ms (relative-availability reads time to reset). 0 when absent. */
  nowMs?: number;
  /** The requested model's family (`opus`, `sonnet`, …), for the filter's verdicts. */
  modelFamily?: string;
  /**
   * The expected work rate of this request's session, weighted tokens per ms: its own recent cadence
   * once it has one, else the fleet's expected rate (src/routing/sessionWork.ts). Read by `forecast`;
   * absent = the default rate.
   */
  sessionTokensPerMs?: number;
  /**
   * How long a session is expected to keep working from now, ms: the horizon of a session's expected
   * work (src/routing/sessionWork.ts, the fleet's learned session life). Read by `forecast`; absent =
   * the idle TTL.
   */
  sessionHorizonMs?: number;
}

/** The reasons the catalogue's strategies (beyond fill-first and round-robin) give. */
export const STRATEGY_REASONS = [
  'capacity_draw',
  'availability_draw',
  'least_used',
  'sequential_order',
  'reset_bucket',
  'remaining_capacity',
  'pinned_account',
  'weighted_score',
  'score_tie',
  'forecast_fits',
  'forecast_expiry',
  'forecast_margin',
] as const;
export type StrategyReason = (typeof STRATEGY_REASONS)[number];

/** Every reason a plan gives for its first account (what `decisions --reason` accepts). */
export const SELECTION_REASONS = [
  ...RANKING_REASONS,
  'single_account',
  'no_account',
  'session_affinity',
  'preferred_primary',
  'spill_inflight',
  'sticky_reallocation',
  'earlier_reset',
  'round_robin',
  'configured_order',
  'routing_policy_error',
  'recovery_probe',
  'evidence_probe',
  'warm_up',
  ...STRATEGY_REASONS,
] as const;
/** Why the first account was chosen. */
export type SelectionReason = (typeof SELECTION_REASONS)[number];

/** Which planner stage decided the first account. */
export type DecidingStage = 'filter' | 'order' | 'modify' | 'policy_error';

/** Why affinity did not place the bound account first. */
export type AffinitySkipReason = 'unusable' | 'session_saturated' | 'over_sticky_threshold' | 'expired' | 'no_session' | 'disabled';

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

/** The probe a plan carries: its first account is re-checked by this request (docs/routing.md#recovery-probes). */
export interface ProbeOutcome {
  account: string;
  kind: ProbeKind;
}

/** How one account fared in a plan. */
export interface CandidateVerdict {
  account: string;
  /** Position in the final try order, 0-based. */
  rank: number;
  verdict: 'selected' | 'ranked_below' | 'unusable';
  /**
   * For `selected`: the selection reason; otherwise why it lost: the order step that put the winner
   * ahead of it (read from the loser's side: `weekly_reset` = its weekly reset is later), its
   * unusable reason, `fallback_last`, or the modifier that moved the winner past it.
   */
  reason: string;
  /** The filter's verdict on this account, with its figures (words: `verdictText`). */
  filter: FilterVerdict;
  /** Under `forecast`, for an eligible account: the numbers it was ordered by (words: `forecastText`). */
  forecast?: ForecastFigures;
}

/** The planner's answer. */
export interface RoutePlan {
  /** Accounts in the order to try (unusable ones last; the attempt loop skips them). */
  order: PlanAccount[];
  selectionReason: SelectionReason;
  /** The order stage's order (before affinity, primary and spill): what `replay` compares. */
  rankingOrder: string[];
  affinity: AffinityOutcome;
  spill: SpillOutcome | null;
  verdicts: CandidateVerdict[];
  /** Set when a policy step threw and the plan fell back to plain expiry-first. */
  policyError: string | null;
  /** The strategy that ordered the accounts. */
  strategy: string;
  /** The stage that decided the first account. */
  decidedBy: DecidingStage;
  /** What `replay` needs beyond the candidates to plan the request again (absent for fill-first, which needs nothing more). */
  strategyInputs?: StrategyInputs;
  /** Set when the first account is tried as a probe (absent otherwise). */
  probe?: ProbeOutcome;
}

/** The inputs of a non-default strategy that the decision record does not otherwise hold. */
export interface StrategyInputs {
  /** Planning time, epoch ms. */
  nowMs: number;
  roundRobinCursor: number;
  maxInflightPerAccount: number;
  relativeAvailabilityTopK: number;
  relativeAvailabilityPower: number;
  singleAccountLabel: string | null;
  weightedPreset: string;
  weights: Partial<Record<string, number>>;
  /** Per account label, what the strategy read of it beyond the candidate: configured priority and cost tier, latency factor, recent error rate, and `forecast`'s reservations, learned costs and bound work (only those set). */
  accounts: Record<
    string,
    {
      priority?: number;
      costTier?: number;
      planSize?: number;
      latencyFactor?: number;
      recentErrorRate?: number;
      reserved?: PlanAccount['reserved'];
      learnedCosts?: AccountLearnedCosts;
      boundWork?: BoundWork;
    }
  >;
  /** `forecast`: the session's expected rate, weighted tokens per ms (absent: the default). */
  sessionTokensPerMs?: number;
  /** `forecast`: the sessions' expected working horizon, ms (absent: the idle TTL). */
  sessionHorizonMs?: number;
}
