/**
 * A rolling sample of the output tokens each model actually produced in complete answers, behind
 * the adaptive output estimate of cost leases (src/routing/costEstimate.ts, docs/cost-leases.md).
 * Reading a prediction is O(1): the ring's values are also kept sorted as they come and go (a binary
 * search and a short move per answer, no sort), and the quantile in force is read from them once per
 * {@link QUANTILE_REFRESH_EVERY} samples, when an answer is reconciled, never while a request is planned.
 */
import { MIN_OUTPUT_SAMPLES, OUTPUT_QUANTILE, predictionState, quantileOfSorted, type OutputPrediction, type OutputPredictionState } from '../../routing/costEstimate';

/** Outputs kept per model (the newest; older ones fall out of the ring). */
export const OUTPUT_SAMPLE_WINDOW = 200;
/** Outputs over which the undershoot rate is measured (the newest). */
export const UNDERSHOOT_WINDOW = 100;
/** New samples between two recomputations of a model's quantile. */
export const QUANTILE_REFRESH_EVERY = 10;
/** Models tracked at once; a new one past it replaces the one seen longest ago (model names come from clients). */
export const MAX_TRACKED_MODELS = 64;

/** One model's rolling sample. */
class ModelSample {
  /** Output tokens, a ring of the newest {@link OUTPUT_SAMPLE_WINDOW}. */
  private readonly ring = new Uint32Array(OUTPUT_SAMPLE_WINDOW);
  /** The ring's values in ascending order (the first {@link samples} entries). */
  private readonly sorted = new Uint32Array(OUTPUT_SAMPLE_WINDOW);
  /** 1 where an output checked against the quantile beat it, a ring of the newest {@link UNDERSHOOT_WINDOW}. */
  private readonly beaten = new Uint8Array(UNDERSHOOT_WINDOW);
  /** Outputs ever recorded (the ring holds the newest of them). */
  private recorded = 0;
  private checkedTotal = 0;
  private beatenInWindow = 0;
  private sinceRefresh = 0;
  private quantile: number | null = null;
  private cached: OutputPrediction = { state: 'warming_up', quantileTokens: null };

  /** Adds one complete answer's output tokens; it is first checked against the quantile then in force. */
  record(outputTokens: number): void {
    const tokens = Math.max(0, Math.min(0xffffffff, Math.round(outputTokens)));
    if (this.quantile !== null) {
      const slot = this.checkedTotal % UNDERSHOOT_WINDOW;
      this.beatenInWindow -= this.beaten[slot];
      this.beaten[slot] = tokens > this.quantile ? 1 : 0;
      this.beatenInWindow += this.beaten[slot];
      this.checkedTotal++;
    }
    const slot = this.recorded % OUTPUT_SAMPLE_WINDOW;
    let n = this.samples;
    if (n === OUTPUT_SAMPLE_WINDOW) {
      // The oldest output leaves the sorted values too.
      const at = lowerBound(this.sorted, n, this.ring[slot]);
      this.sorted.copyWithin(at, at + 1, n);
      n--;
    }
    const at = lowerBound(this.sorted, n, tokens);
    this.sorted.copyWithin(at + 1, at, n);
    this.sorted[at] = tokens;
    this.ring[slot] = tokens;
    this.recorded++;
    if (++this.sinceRefresh >= QUANTILE_REFRESH_EVERY || (this.quantile === null && this.samples >= MIN_OUTPUT_SAMPLES)) this.refresh();
    // A new object only when the prediction changed (most answers leave it as it was).
    const state = predictionState(this.samples, this.undershootRate, this.checked);
    if (state !== this.cached.state || this.quantile !== this.cached.quantileTokens) this.cached = { state, quantileTokens: this.quantile };
  }

  /** The prediction now (the same object until the next record). */
  get prediction(): OutputPrediction {
    return this.cached;
  }

  /** Outputs in the ring. */
  get samples(): number {
    return Math.min(this.recorded, OUTPUT_SAMPLE_WINDOW);
  }

  /** Outputs in the undershoot window. */
  get checked(): number {
    return Math.min(this.checkedTotal, UNDERSHOOT_WINDOW);
  }

  /** Share of the checked outputs that beat the quantile, 0–1 (0 before any was checked). */
  get undershootRate(): number {
    const n = this.checked;
    return n === 0 ? 0 : this.beatenInWindow / n;
  }

  private refresh(): void {
    this.sinceRefresh = 0;
    const n = this.samples;
    if (n < MIN_OUTPUT_SAMPLES) return;
    this.quantile = quantileOfSorted(this.sorted, n, OUTPUT_QUANTILE);
  }
}

/** The first index of ascending `sorted[0..n)` whose value is not below `v` (n when none). */
function lowerBound(sorted: Uint32Array, n: number, v: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** What `/estimation` shows of one model. */
export interface ModelEstimate {
  model: string;
  state: OutputPredictionState;
  /** Outputs in the rolling sample. */
  samples: number;
  /** The p95 of the sample, tokens; null before it has {@link MIN_OUTPUT_SAMPLES}. */
  quantileTokens: number | null;
  /** Share of the outputs checked against the quantile that beat it, 0–1. */
  undershootRate: number;
  /** Outputs checked against the quantile (the rate's denominator, at most {@link UNDERSHOOT_WINDOW}). */
  checked: number;
}

const NOT_PREDICTED: OutputPrediction = Object.freeze({ state: 'warming_up', quantileTokens: null });

/** Every model's rolling sample. */
export class OutputSamples {
  private readonly models = new Map<string, ModelSample>();

  constructor(private readonly onChange: () => void = () => undefined) {}

  /** The prediction for `model` now, O(1); warming up for a model never seen (or null: no model named). */
  prediction(model: string | null): OutputPrediction {
    return (model !== null && this.models.get(model)?.prediction) || NOT_PREDICTED;
  }

  /** Records one complete answer of `model`: `outputTokens` from its `usage`. */
  record(model: string, outputTokens: number): void {
    let sample = this.models.get(model);
    if (!sample) {
      if (this.models.size >= MAX_TRACKED_MODELS) this.models.delete(this.models.keys().next().value!);
      this.models.set(model, (sample = new ModelSample()));
    }
    sample.record(outputTokens);
    this.onChange();
  }

  /** Each model's estimate, in the order first seen. */
  estimates(): ModelEstimate[] {
    return [...this.models].map(([model, s]) => ({
      model,
      state: s.prediction.state,
      samples: s.samples,
      quantileTokens: s.prediction.quantileTokens,
      undershootRate: s.undershootRate,
      checked: s.checked,
    }));
  }
}
