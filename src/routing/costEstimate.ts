/**
 * A request's estimated cost, reserved on the account it tries while it runs (a cost lease,
 * docs/cost-leases.md), and the adaptive output estimate behind its output half. Pure: the
 * rolling samples these functions read live in `src/proxy/state/outputSamples.ts`.
 *
 * Units: tokens throughout; rates and shares are fractions 0–1.
 */
import type { TokensByKind } from '../quota/learnedCosts';

/** Estimated tokens of one request by kind (the four counts of Anthropic's `usage`), or their sum over the requests in flight on an account: the same shape as served tokens. */
export type CostEstimate = TokensByKind;

/** `routing.cost-lease-margin`'s default: every estimate is multiplied by it (reserving a little too much is the safe direction). */
export const DEFAULT_COST_LEASE_MARGIN = 1.15;
/** Request-body bytes per input token: the usual ~4 characters of text per token; JSON punctuation makes it an over-estimate, the safe direction. */
export const BYTES_PER_TOKEN = 4;
/** Share of a warm session's input read from the cache; the rest (the turn's new messages) is written. */
export const WARM_CACHE_READ_SHARE = 0.9;
/** The quantile of a model's real outputs that is leased (p95). */
export const OUTPUT_QUANTILE = 0.95;
/** Samples a model needs before its quantile is leased; until then the lease is the request's `max_tokens`. */
export const MIN_OUTPUT_SAMPLES = 20;
/** Share of outputs above the quantile past which the estimate falls back to `max_tokens`: twice the 5 % a p95 is beaten by construction. */
export const MAX_UNDERSHOOT_RATE = 2 * (1 - OUTPUT_QUANTILE);
/** The output lease of a request whose `max_tokens` could not be read cheaply and whose model is not predicted: Claude Code's usual ceiling. */
export const UNKNOWN_MAX_TOKENS = 32_000;

/** Where a request's prompt is likely cached: `warm` on its session's bound account, `cold` elsewhere (the prompt is written), `none` without a session. */
export type CacheTemperature = 'warm' | 'cold' | 'none';

/** Whether a model's output is predicted, and why not. */
export type OutputPredictionState = 'warming_up' | 'predicting' | 'undershoot';

/** What a model's rolling sample says now. */
export interface OutputPrediction {
  state: OutputPredictionState;
  /** The sample's {@link OUTPUT_QUANTILE} quantile, tokens; null before {@link MIN_OUTPUT_SAMPLES}. */
  quantileTokens: number | null;
}

/** Input tokens of a body of `bytes` bytes: ceil(bytes / {@link BYTES_PER_TOKEN}). */
export function inputTokensOfBody(bytes: number): number {
  return Math.ceil(bytes / BYTES_PER_TOKEN);
}

/**
 * The nearest-rank quantile of ascending `sorted` values (`q` a fraction 0–1); 0 when empty.
 * @param sorted ascending, at least the first `n` entries used
 */
export function quantileOfSorted(sorted: ArrayLike<number>, n: number, q: number): number {
  if (n <= 0) return 0;
  return sorted[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))];
}

/**
 * Whether a model is predicted: `warming_up` below {@link MIN_OUTPUT_SAMPLES} samples, `undershoot`
 * while more than {@link MAX_UNDERSHOOT_RATE} of the outputs checked against the quantile beat it
 * (checked over at least MIN_OUTPUT_SAMPLES), `predicting` otherwise.
 * @param undershootRate share of checked outputs above the quantile, 0–1
 * @param checked outputs checked against the quantile (the rate's denominator)
 */
export function predictionState(samples: number, undershootRate: number, checked: number): OutputPredictionState {
  if (samples < MIN_OUTPUT_SAMPLES) return 'warming_up';
  if (checked >= MIN_OUTPUT_SAMPLES && undershootRate > MAX_UNDERSHOOT_RATE) return 'undershoot';
  return 'predicting';
}

/**
 * The output tokens to lease: the predicted quantile times `margin`, never above the request's
 * ceiling; the ceiling itself while the model is not predicted.
 * @param maxTokens the request's `max_tokens`, or null when it was not read ({@link UNKNOWN_MAX_TOKENS})
 */
export function outputLeaseTokens(prediction: OutputPrediction, maxTokens: number | null, margin: number): number {
  const ceiling = maxTokens ?? UNKNOWN_MAX_TOKENS;
  if (prediction.state !== 'predicting' || prediction.quantileTokens === null) return ceiling;
  return Math.min(ceiling, Math.ceil(prediction.quantileTokens * margin));
}

/**
 * One request's cost estimate on one account: input from the body's size, split by where its
 * prompt is cached, times `margin`; output as given (already sized by {@link outputLeaseTokens}).
 * @param bodyBytes the request body's length, bytes
 * @param outputTokens the output lease, tokens
 */
export function estimateCost(bodyBytes: number, cache: CacheTemperature, outputTokens: number, margin: number): CostEstimate {
  const input = Math.ceil(inputTokensOfBody(bodyBytes) * margin);
  if (cache === 'none') return { inputTokens: input, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens };
  if (cache === 'cold') return { inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: input, outputTokens };
  const read = Math.round(input * WARM_CACHE_READ_SHARE);
  return { inputTokens: 0, cacheReadTokens: read, cacheWriteTokens: input - read, outputTokens };
}
