/**
 * How each account has been performing lately — its turns' latency (for the draw strategies'
 * latency weighting, src/routing/planner/latency.ts) and the share of its recent attempts that
 * failed (the `weighted` strategy's error term). In memory only, bounded per account; fed by the
 * record step as requests end.
 */
import { latencyFactors, LATENCY_WINDOW_MS, type LatencySample } from '../../routing/planner/latency';

/** Latency samples kept per account (the newest). */
const MAX_SAMPLES = 64;
/** Attempts the error rate is computed over per account (the newest, within the last hour). */
const MAX_ATTEMPTS = 20;
/** How long a computed set of latency factors is reused, ms: a plan must not sort samples on every request. */
const FACTORS_TTL_MS = 1_000;

/**
 * Attempt results that count as the account's failure (docs/routing.md#failures): upstream trouble
 * and throttles. A quota exhaustion is not one (the headroom term covers it), nor is a request
 * the client got wrong, nor a client that left.
 */
const FAILED_RESULTS: ReadonlySet<string> = new Set([
  'throttle',
  'overloaded',
  'server_error',
  'network_error',
  'forbidden',
  'stream_failed',
  'empty_stream',
  'invalid_json',
  'body_failed',
  'body_too_large',
  'stream_server_error',
  'stream_overloaded',
  'stream_throttle',
]);

/** An attempt's result as the error rate reads it. */
export function isAccountFailure(result: string): boolean {
  return FAILED_RESULTS.has(result);
}

/** One account's newest attempts (at most {@link MAX_ATTEMPTS}) in a ring: no object and no array shift per attempt. */
class AttemptRing {
  private readonly atMs = new Float64Array(MAX_ATTEMPTS);
  private readonly failed = new Uint8Array(MAX_ATTEMPTS);
  private size = 0;
  private next = 0;

  push(atMs: number, failed: boolean): void {
    this.atMs[this.next] = atMs;
    this.failed[this.next] = failed ? 1 : 0;
    this.next = (this.next + 1) % MAX_ATTEMPTS;
    if (this.size < MAX_ATTEMPTS) this.size++;
  }

  /** The share of the kept attempts since `sinceMs` (epoch ms) that failed, 0 with none. */
  failedShare(sinceMs: number): number {
    let n = 0;
    let failed = 0;
    for (let i = 0; i < this.size; i++) {
      if (this.atMs[i] < sinceMs) continue;
      n++;
      failed += this.failed[i];
    }
    return n === 0 ? 0 : failed / n;
  }
}

/** Recent performance of every account. */
export class AccountPerformance {
  /** Per account, its newest turns (at most {@link MAX_SAMPLES}, in no particular order: they are read as a set). */
  private readonly samples = new Map<string, { turns: LatencySample[]; next: number }>();
  private readonly attempts = new Map<string, AttemptRing>();
  private readonly factors = new Map<string | undefined, { atMs: number; version: number; factors: ReadonlyMap<string, number> }>();
  private version = 0;

  /** Records a successful single-attempt streamed turn of `account`: past {@link MAX_SAMPLES}, it takes the oldest one's place. */
  recordTurn(account: string, sample: LatencySample): void {
    let kept = this.samples.get(account);
    if (!kept) this.samples.set(account, (kept = { turns: [], next: 0 }));
    if (kept.turns.length < MAX_SAMPLES) kept.turns.push(sample);
    else {
      kept.turns[kept.next] = sample;
      kept.next = (kept.next + 1) % MAX_SAMPLES;
    }
    this.version++;
  }

  /** Records one attempt on `account` at `atMs` (epoch ms) and whether it failed ({@link isAccountFailure}). */
  recordAttempt(account: string, atMs: number, failed: boolean): void {
    let ring = this.attempts.get(account);
    if (!ring) this.attempts.set(account, (ring = new AttemptRing()));
    ring.push(atMs, failed);
  }

  /**
   * The latency weight factor of each account for a request of `family` at `nowMs` (epoch ms):
   * only accounts below 1 (0.5–1) are in the map. Computed at most once a second per family,
   * and again as soon as a new sample arrives.
   */
  latencyFactors(nowMs: number, family: string | undefined): ReadonlyMap<string, number> {
    const cached = this.factors.get(family);
    if (cached && cached.version === this.version && nowMs - cached.atMs < FACTORS_TTL_MS) return cached.factors;
    const turns = new Map<string, readonly LatencySample[]>();
    for (const [account, kept] of this.samples) turns.set(account, kept.turns);
    const factors = latencyFactors(turns, nowMs, family);
    this.factors.set(family, { atMs: nowMs, version: this.version, factors });
    return factors;
  }

  /** The share of `account`'s last 20 attempts within the last hour that failed, fraction 0–1 (0 with none). */
  recentErrorRate(account: string, nowMs: number): number {
    return this.attempts.get(account)?.failedShare(nowMs - LATENCY_WINDOW_MS) ?? 0;
  }

  /** Forgets an account that was removed. */
  forgetAccount(account: string): void {
    this.samples.delete(account);
    this.attempts.delete(account);
    this.version++;
  }
}
