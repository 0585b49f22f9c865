/**
 * The fake upstream's concurrency: per account, the `/v1/messages` requests being answered now,
 * and — when a limit is scripted — the concurrency throttle parallel requests meet: a request that
 * arrives while more than `limit` are in flight on the account (itself included) is answered 429
 * with unified headers that all say `allowed` and no `retry-after`.
 */
import type { ServerResponse } from 'node:http';

/** One account's requests in flight and its scripted limit. */
export class ConcurrencyGate {
  /** Messages requests of the account being answered now. */
  inflight = 0;
  /** The most that were ever in flight at once. */
  maxInflight = 0;
  /** More than this many at once are throttled; null: no limit. */
  limit: number | null = null;

  /**
   * A Messages request arrives: it is counted until its response closes, unless it is throttled
   * (answered at once, so it never stays in flight).
   * @returns the requests in flight with it (itself included), and whether it is throttled
   */
  enter(res: ServerResponse): { inflight: number; throttled: boolean } {
    const inflight = this.inflight + 1;
    if (this.limit !== null && inflight > this.limit) return { inflight, throttled: true };
    this.inflight = inflight;
    if (inflight > this.maxInflight) this.maxInflight = inflight;
    res.once('close', () => this.inflight--);
    return { inflight, throttled: false };
  }
}

/** Checks a scripted limit from an untrusted source: a positive integer, or null for none. */
export function validConcurrencyLimit(limit: unknown): number | null {
  if (limit === null) return null;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) throw new Error('concurrency limit must be a positive integer or null');
  return limit;
}
