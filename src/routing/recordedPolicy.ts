/**
 * The routing policy a decision was planned under, rebuilt from its record: the keys the record
 * holds (`strategy`, `ranking`, `policy`, `strategyInputs`, the primary among the candidates) over
 * the defaults for the rest. `replay` plans a record again under it; the what-if simulator replays
 * a log's own policy with it. Pure. Fields: docs/decision-record.md.
 */
import type { DecisionRecord } from './decision';
import { DEFAULT_POLICY, type RoutingPolicy } from './policy';

/**
 * The policy of `r`. Keys a record does not hold (`session-soft-limit`, the sticky thresholds,
 * `prefer-earlier-reset`, …) read as DEFAULT_POLICY's; the strategy's own keys are read from
 * `strategyInputs` when the record has them (every strategy but fill-first records them).
 */
export function recordedPolicy(r: DecisionRecord): RoutingPolicy {
  const si = r.strategyInputs;
  let primary: string | undefined;
  for (const c of r.candidates ?? []) if (c.primary) primary = c.account;
  return {
    ...DEFAULT_POLICY,
    strategy: r.strategy,
    accountRanking: r.ranking,
    preferPrimary: r.policy.preferPrimary,
    primaryAccount: primary,
    sessionAffinity: r.policy.sessionAffinity,
    sessionAffinityIdleTtlMs: r.policy.sessionAffinityIdleTtlMs,
    spillInflight: r.policy.spillInflight,
    quotaRouting: r.policy.quotaRouting,
    ...(si && {
      maxInflightPerAccount: si.maxInflightPerAccount,
      relativeAvailabilityTopK: si.relativeAvailabilityTopK,
      relativeAvailabilityPower: si.relativeAvailabilityPower,
      singleAccountLabel: si.singleAccountLabel ?? undefined,
      weightedPreset: si.weightedPreset,
      weights: si.weights,
    }),
  };
}
