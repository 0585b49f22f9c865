/**
 * Step 5: the route plan — the accounts to try, in order, and why — from the
 * request's configuration and the router state now. `/status` previews the
 * plan of a new, unbound request with the same function.
 */
import type { MetricsParams } from '../../routing/metrics';
import { planRoute, recordsStrategyInputs, type PlanAccount, type RoutePlan } from '../../routing/plan';
import { strategyFor } from '../../routing/planner/strategies/registry';
import type { RuntimeConfig } from '../runtimeConfig';
import type { RouterState } from '../state/routerState';
import type { RequestContext, RouterServices } from './context';
import { accountMetrics, metricsParams } from './eligibility';
import { noteMovingTraffic } from './herd';
import { probeFor, takeProbe } from './probe';

/** Plans the request; counts it (and moves the round-robin cursor) when it is a Messages call. */
export function plan(ctx: RequestContext): void {
  const s = ctx.services;
  const config = ctx.generation.config;
  const isMessages = ctx.route === 'messages';
  ctx.params = metricsParams(config.policy, ctx.info.model);
  const now = s.now();
  const plan = (ctx.plan = planFor(s.state, config, ctx.params, ctx.info.sticky.keyHash, now, isMessages, ctx.requestId));
  if (plan.policyError) logPolicyError(s, plan.policyError);
  takeProbe(ctx);
  if (isMessages) {
    noteMovingTraffic(ctx, now);
    s.state.countRequestStarted();
    s.state.roundRobinCursor++;
  }
}

/**
 * The plan for a request under `config` at `now` (epoch ms). Only Messages calls use session
 * affinity, spill and probes; the others go by ranking alone. `requestId` seeds the draw-based strategies.
 * @param sessionId the sticky key's hash (src/routing/identify.ts), or null: never a raw id
 */
export function planFor(state: RouterState, config: RuntimeConfig, params: MetricsParams, sessionId: string | null, now: number, isMessages: boolean, requestId = ''): RoutePlan {
  const { policy } = config;
  const strategy = strategyFor(policy.strategy);
  // Read only by the strategies that use them: fill-first pays nothing.
  const latency = strategy.modifiers.has('latency') ? state.performance.latencyFactors(now, params.modelFamily) : undefined;
  const readsErrors = strategy.readsErrorRate === true;
  const forecasting = strategy.readsForecast === true && isMessages;
  // Reservations are recorded with a strategy's inputs (and read by `forecast`); fill-first copies none.
  const readsReserved = recordsStrategyInputs(strategy.name);
  const accounts: PlanAccount[] = [];
  for (let index = 0; index < config.accounts.length; index++) {
    const a = config.accounts[index];
    if (!a.enabled) continue;
    const metrics = accountMetrics(state, a.label, params, now);
    accounts.push({
      id: a.label,
      index,
      isPrimary: policy.primaryAccount === a.label,
      fallback: a.fallback,
      inflight: a.fallback ? 0 : state.leases.inflight(a.label),
      reserved: readsReserved ? state.leases.reserved(a.label) : undefined,
      metrics,
      cooldownReason: state.cooldowns.get(a.label)?.reason,
      priority: a.priority,
      costTier: a.costTier,
      planSize: a.planSize,
      latencyFactor: latency?.get(a.label),
      recentErrorRate: readsErrors ? state.performance.recentErrorRate(a.label, now) || undefined : undefined,
      probe: isMessages && !a.fallback ? probeFor(state, a.label, a.kind === 'oauth', metrics, now) : undefined,
      learnedCosts: forecasting ? state.learnedCosts.costs(a.label) : undefined,
      // accountWork returns a new object: the plan and its record keep the figures of this moment.
      boundWork: forecasting ? state.sessionWork.accountWork(a.label, now) : undefined,
    });
  }
  const useAffinity = isMessages && policy.sessionAffinity && strategy.bindsSessions;
  const binding = useAffinity && sessionId ? state.affinity.get(sessionId, now) : undefined;
  return planRoute({
    accounts,
    policy: isMessages ? policy : { ...policy, spillInflight: 0 },
    sessionId,
    binding,
    roundRobinCursor: state.roundRobinCursor,
    requestId,
    nowMs: now,
    modelFamily: params.modelFamily,
    sessionTokensPerMs: forecasting ? state.sessionWork.expectedRate(sessionId) : undefined,
    sessionHorizonMs: forecasting ? state.sessionWork.expectedLifeMs() : undefined,
  });
}

function logPolicyError(s: RouterServices, signature: string): void {
  if (s.loggedPolicyErrors.has(signature)) return;
  s.loggedPolicyErrors.add(signature);
  s.log.error(`routing policy failed, using expiry-first: ${signature}`);
}
