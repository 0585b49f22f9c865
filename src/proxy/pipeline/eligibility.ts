/**
 * Account metrics as the request path reads them from router state and a
 * configuration: the same numbers the planner, the attempt loop (is the next
 * account still usable?), session binding, the "no usable account" answer,
 * `/status` and the VS Code views use.
 */
import type { RoutingPolicy } from '../../routing/policy';
import { modelFamily } from '../../quota/family';
import { computeMetrics, type AccountMetrics, type MetricsParams } from '../../routing/metrics';
import type { PlanAccount } from '../../routing/plan';
import type { RecoveryInput } from '../../routing/recovery';
import type { RuntimeConfig } from '../runtimeConfig';
import type { RouterState } from '../state/routerState';
import type { RequestContext, RouterServices } from './context';

/** The metrics parameters of `policy` for a request of `model` (null: no model). */
export function metricsParams(policy: RoutingPolicy, model: string | null): MetricsParams {
  return {
    sessionSoftLimit: policy.sessionSoftLimit,
    sessionResetToleranceMs: policy.sessionResetToleranceMs,
    allowOverage: policy.allowOverage,
    modelFamily: modelFamily(model ?? undefined),
  };
}

/** One account's metrics at `now` (epoch ms). */
export function accountMetrics(state: RouterState, label: string, params: MetricsParams, now: number): AccountMetrics {
  const family = params.modelFamily;
  const scopedCooldown = family === undefined ? undefined : state.scopedCooldowns.get(label)?.get(family);
  return computeMetrics({ snapshot: state.snapshots.get(label), cooldown: state.cooldowns.get(label), scopedCooldown, needsSignIn: state.needsSignIn.has(label) }, params, now);
}

/** Metrics of every account of `config` (enabled or not) for a request of `model` at `now` (epoch ms), by label. */
export function metricsFor(state: RouterState, config: RuntimeConfig, model: string | null, now: number): Map<string, AccountMetrics> {
  const params = metricsParams(config.policy, model);
  return new Map(config.accounts.map((a) => [a.label, accountMetrics(state, a.label, params, now)]));
}

/** Whether `label` is usable for this request now (earlier attempts may have cooled it down). */
export function usableNow(ctx: RequestContext, label: string): boolean {
  const s = ctx.services;
  return accountMetrics(s.state, label, ctx.params, s.now()).usable;
}

/** Whether `label` is still configured: a reload may remove an account mid-request, and its state must not come back. */
export function isConfigured(services: RouterServices, label: string): boolean {
  return services.live.accountsByLabel.has(label);
}

/** Whether a Messages call may not take `account` now: a non-fallback account at `max-inflight-per-account` (0 = no cap). */
export function atInflightCap(ctx: RequestContext, account: PlanAccount): boolean {
  const cap = ctx.generation.config.policy.maxInflightPerAccount;
  return ctx.route === 'messages' && cap > 0 && !account.fallback && ctx.services.state.leases.inflight(account.id) >= cap;
}

/** The recovery forecast's input for the accounts this request's plan offered, at `now` (epoch ms), in configured order. */
export function plannedRecoveryInputs(ctx: RequestContext, now: number): RecoveryInput[] {
  const { state } = ctx.services;
  const config = ctx.generation.config;
  const metrics = metricsFor(state, config, ctx.info.model, now);
  // The accounts the plan offered: every enabled account, except under single-account (only the pinned one).
  const planned = new Set(ctx.plan.order.map((a) => a.id));
  return config.accounts
    .filter((a) => a.enabled && planned.has(a.label))
    .map((a) => ({ label: a.label, metrics: metrics.get(a.label)!, cooldown: state.cooldowns.get(a.label), snapshot: state.snapshots.get(a.label) }));
}
