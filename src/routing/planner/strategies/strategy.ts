/**
 * The interface every routing strategy implements (stage 2, order). A strategy is one small
 * module registered by name in `registry.ts`; the planner never names one.
 */
import type { SessionBinding } from '../../affinity';
import type { RebindMode, RoutingPolicy } from '../../policy';
import type { PlanAccount, SelectionReason } from '../types';
import type { ForecastFigures } from '../verdict';

/**
 * The modifiers (stage 3) a strategy lets act on its order. `evidence-probe`: an account with no
 * quota evidence may take a probe (for orders that rank such an account last). Recovery probes
 * apply under every strategy. `latency`: a draw weight falls for an account slower than the fleet.
 */
export type Modifier = 'affinity' | 'prefer-primary' | 'prefer-earlier-reset' | 'spill' | 'latency' | 'evidence-probe';

/** What a strategy orders. Every list is in configured order. */
export interface OrderInput {
  /** Usable and below the session soft limit. */
  eligible: readonly PlanAccount[];
  /** Usable, at the session soft limit. */
  soft: readonly PlanAccount[];
  /** Not usable (cooling, exhausted, needs sign-in). */
  unusable: readonly PlanAccount[];
  /** All non-fallback accounts. */
  all: readonly PlanAccount[];
  policy: RoutingPolicy;
  /** Numbers in (0, 1) seeded from the request id: the same request draws the same numbers. */
  random: () => number;
  /** 32-bit hash of the session key (of the request id without one): the tie-break of `weighted`. Computed on first use. */
  sessionHash: () => number;
  /** The session's live binding, when the strategy's modifiers or score read it. */
  binding: SessionBinding | undefined;
  /** How many Messages requests started before this one (round-robin). */
  roundRobinCursor: number;
  /** Planning time, epoch ms. */
  nowMs: number;
  /** The session's expected work rate, weighted tokens per ms (PlanInput.sessionTokensPerMs); undefined = the default. */
  sessionTokensPerMs: number | undefined;
  /** How long a session is expected to keep working, ms (PlanInput.sessionHorizonMs); undefined = the idle TTL. */
  sessionHorizonMs: number | undefined;
  /** What the strategy's `order` computed for this request and its `lossReason` reads again (one plan's scratch). */
  memo: unknown;
}

/** A strategy's order of every non-fallback account and the reason rank 0 is first. */
export interface OrderResult {
  order: PlanAccount[];
  reason: SelectionReason;
  /** What `replay` compares; the order's labels when absent. */
  rankingOrder?: string[];
}

export interface Strategy {
  /** The `strategy` value that selects it. */
  readonly name: string;
  /** One line for people (docs, settings, status). */
  readonly summary: string;
  /**
   * Behaviour and trade-off in one sentence (Markdown): the Choose Routing Strategy quick pick
   * shows it, and package.json's `markdownEnumDescriptions` for `claudeRouter.routing.strategy`
   * holds the same text (a test keeps them equal).
   */
  readonly description: string;
  /** The modifiers that apply to its order, in the planner's fixed precedence. */
  readonly modifiers: ReadonlySet<Modifier>;
  /** Whether a served session is bound (affinity or a score that reads the binding). */
  readonly bindsSessions: boolean;
  /** Its order reads each account's reservations, learned costs and bound work, and the session's expected rate (filled in only then). */
  readonly readsForecast?: boolean;
  /** Its order reads each account's recent error rate (`PlanAccount.recentErrorRate`), which is filled in only then. */
  readonly readsErrorRate?: boolean;
  /** The rebind mode it always runs with, whatever `session-affinity-rebind` says (src/routing/rebind.ts); absent = the setting's. */
  readonly rebind?: RebindMode;
  /** Only the first account of its order is offered, and no fallback account follows it. */
  readonly noFailover?: boolean;
  /** A total, deterministic order of `input.all` (same input and draws → same order). */
  order(input: OrderInput): OrderResult;
  /** Why `loser` is below `winner` in this strategy's order (a reason code, read from the loser's side). */
  lossReason(winner: PlanAccount, loser: PlanAccount, input: OrderInput): string;
  /** The forecast its order read of an eligible account (recorded on the candidate's verdict); absent for strategies that forecast nothing. */
  figures?(account: PlanAccount, input: OrderInput): ForecastFigures | undefined;
}
