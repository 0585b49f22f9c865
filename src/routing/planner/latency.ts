/**
 * Relative latency weighting (the `latency` modifier of the draw strategies): an account whose
 * recent turns were clearly slower than the fleet's gets a smaller draw weight — never less than
 * half, never none, and never a bound session moved (affinity acts after the order). Pure.
 *
 * Two measures, each from successful single-attempt streamed turns of the last hour:
 * - time to first token (the upstream's answer head), on small turns only (at most
 *   {@link SMALL_TURN_TOKENS} uncached input tokens, so prefill time does not dominate);
 * - output tokens per second after the first token, per model family.
 * A measure acts only when at least {@link MIN_ACCOUNTS} accounts each have at least
 * {@link MIN_SAMPLES} samples of it; an account with fewer keeps its full weight.
 * Source of the rule: docs/strategies.md#latency-weighting.
 */

/** One successful turn, as the latency weighting reads it. */
export interface LatencySample {
  /** When the turn ended, epoch ms. */
  atMs: number;
  /** Time from sending the request to the answer's head, ms. */
  firstTokenMs: number;
  /** Input tokens the upstream had to process (input + cache creation; cache reads excluded). */
  uncachedInputTokens: number;
  /** Output tokens per second after the first token, or undefined when the turn had too few to measure. */
  outputTokensPerS: number | undefined;
  /** The model family (`opus`, `sonnet`, …), undefined when unknown. */
  family: string | undefined;
}

/** Samples older than this are ignored, ms (one hour). */
export const LATENCY_WINDOW_MS = 3_600_000;
/** A turn is small when the upstream had at most this many uncached input tokens to process. */
export const SMALL_TURN_TOKENS = 4_096;
/** Samples an account needs for a measure to count. */
export const MIN_SAMPLES = 8;
/** Accounts with enough samples a measure needs before it acts at all. */
export const MIN_ACCOUNTS = 3;
/** How much worse than the fleet median an account may be before it is discounted (fraction: 15 %). */
export const TOLERANCE = 0.15;
/** The smallest weight factor: an account is discounted down to half weight, never out. */
export const MIN_FACTOR = 0.5;

/** The median of `xs` (non-empty); the mean of the middle two for an even count. */
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Per account, the median of `pick` over its samples that have one, when it has at least MIN_SAMPLES. */
function medians(samples: ReadonlyMap<string, readonly LatencySample[]>, nowMs: number, pick: (s: LatencySample) => number | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const [account, list] of samples) {
    const xs: number[] = [];
    for (const s of list) {
      if (nowMs - s.atMs > LATENCY_WINDOW_MS) continue;
      const v = pick(s);
      if (v !== undefined && Number.isFinite(v) && v > 0) xs.push(v);
    }
    if (xs.length >= MIN_SAMPLES) out.set(account, median(xs));
  }
  return out;
}

/**
 * How much worse each account is than the fleet median of a measure, as a fraction (0.4 = 40 %
 * worse), or nothing when fewer than MIN_ACCOUNTS accounts have enough samples.
 * @param higherIsWorse true for a time, false for a rate
 */
function excess(byAccount: Map<string, number>, higherIsWorse: boolean): Map<string, number> {
  if (byAccount.size < MIN_ACCOUNTS) return new Map();
  const fleet = median([...byAccount.values()]);
  const out = new Map<string, number>();
  for (const [account, v] of byAccount) out.set(account, higherIsWorse ? v / fleet - 1 : fleet / v - 1);
  return out;
}

/**
 * The draw-weight factor of each account for a request of `family`: 1 for an account within 15 %
 * of the fleet median on both measures (or without enough samples), falling linearly with the
 * worse measure's excess beyond 15 % to 0.5 at 65 % worse and beyond. Only accounts with a
 * factor below 1 are in the map.
 * @param samples per account label, its recent samples (any order)
 * @param nowMs epoch ms
 */
export function latencyFactors(samples: ReadonlyMap<string, readonly LatencySample[]>, nowMs: number, family: string | undefined): Map<string, number> {
  const firstToken = excess(
    medians(samples, nowMs, (s) => (s.uncachedInputTokens <= SMALL_TURN_TOKENS ? s.firstTokenMs : undefined)),
    true,
  );
  const rate = excess(
    medians(samples, nowMs, (s) => (s.family === family ? s.outputTokensPerS : undefined)),
    false,
  );
  const out = new Map<string, number>();
  for (const account of samples.keys()) {
    const worst = Math.max(firstToken.get(account) ?? 0, rate.get(account) ?? 0);
    const factor = Math.max(MIN_FACTOR, Math.min(1, 1 - (worst - TOLERANCE)));
    if (factor < 1) out.set(account, factor);
  }
  return out;
}
