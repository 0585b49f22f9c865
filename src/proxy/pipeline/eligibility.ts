/**
 * Account metrics as the request path reads them from router state and a
 * configuration: the same numbers the planner, the attempt loop (is the next
 * account still usable?), session binding, the "no usable account" answer,
 * `/status` and the VS Code views use.
 */
import type { RoutingPolicy } from '../../routing/policy';
import { modelFamily } from '../../quota/family';
import { computeMetrics, type AccountMetrics, type MetricsParams } from '../../routing/metrics';
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
