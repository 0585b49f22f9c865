/**
 * What the cost leases believe now (docs/cost-leases.md): per model, whether its output is
 * predicted, its quantile, samples and undershoot rate; per account, the estimated tokens the
 * requests in flight reserve. `GET /estimation`, `claude-router estimation` and the status panel
 * read this one report (the panel through `/status`'s `estimation`).
 */
import { MAX_UNDERSHOOT_RATE, MIN_OUTPUT_SAMPLES, OUTPUT_QUANTILE, outputLeaseTokens, type CostEstimate, type OutputPredictionState } from '../../routing/costEstimate';
import type { RuntimeConfig } from '../runtimeConfig';
import type { RouterState } from '../state/routerState';

/** One model's output estimate. */
export interface ModelEstimationReport {
  model: string;
  /** `predicting`: its quantile is leased; `warming_up`: fewer than `minSamples`; `undershoot`: beaten too often, `max_tokens` is leased until it recovers. */
  state: OutputPredictionState;
  /** Outputs of complete answers in its rolling sample. */
  samples: number;
  /** The sample's p95, tokens; null while warming up. */
  quantileTokens: number | null;
  /** What an output lease reserves now, tokens (the quantile times the margin; a request's `max_tokens` caps it); null while `max_tokens` itself is leased. */
  leaseTokens: number | null;
  /** Share of the recent outputs that beat the quantile, fraction 0–1. */
  undershootRate: number;
  /** Recent outputs checked against the quantile (the rate's denominator). */
  checked: number;
}

/** One account's outstanding reservations. */
export interface AccountEstimationReport {
  account: string;
  /** Messages requests in flight on it. */
  inflight: number;
  /** Estimated tokens they reserve, by kind (zeros when none). */
  reserved: CostEstimate;
}

/** `GET /estimation`. */
export interface EstimationReport {
  /** `routing.cost-lease-margin`: the factor on every estimate. */
  margin: number;
  /** The leased quantile, fraction 0–1 (0.95). */
  quantile: number;
  /** Samples a model needs before its quantile is leased. */
  minSamples: number;
  /** Undershoot rate (fraction 0–1) past which a model falls back to `max_tokens`. */
  maxUndershootRate: number;
  models: ModelEstimationReport[];
  /** Every configured account, in configured order. */
  accounts: AccountEstimationReport[];
}

const NONE: Readonly<CostEstimate> = Object.freeze({ inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0 });

/** The report now, under `config`. */
export function buildEstimation(state: RouterState, config: RuntimeConfig): EstimationReport {
  const margin = config.policy.costLeaseMargin;
  return {
    margin,
    quantile: OUTPUT_QUANTILE,
    minSamples: MIN_OUTPUT_SAMPLES,
    maxUndershootRate: MAX_UNDERSHOOT_RATE,
    models: state.outputs.estimates().map((m) => ({
      ...m,
      leaseTokens: m.state === 'predicting' ? outputLeaseTokens(m, Number.MAX_SAFE_INTEGER, margin) : null,
    })),
    accounts: config.accounts.map((a) => ({ account: a.label, inflight: state.leases.inflight(a.label), reserved: { ...(state.leases.reserved(a.label) ?? NONE) } })),
  };
}
