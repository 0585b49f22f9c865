/**
 * The concurrency limit the router learns for an account from its concurrency throttles (429s
 * whose headers say `allowed` and that carry no `retry-after`, docs/anthropic-api.md#kinds-of-429):
 * cut on a throttle, raised again slowly on successes, forgotten once it has grown past its last
 * throttle or after a quiet spell. Pure: the time is an argument; the proxy keeps
 * one {@link LearnedLimit} per account (src/proxy/state/concurrency.ts).
 * Authority: docs/routing.md#concurrency-limits.
 */

/**
 * After a throttle of a request sent with nothing else in flight (the limit cannot go below 1:
 * a rate throttle), no new request goes to the account for this long: 1 s, in ms — the issue's
 * "no account-wide cooldown beyond about a second for new placements".
 */
export const RATE_THROTTLE_PAUSE_MS = 1_000;

/** A learned limit with no throttle for this long is forgotten: 10 min, in ms (a limit learned in one burst must not cap the account for the rest of the day). */
export const LIMIT_FORGET_AFTER_MS = 10 * 60_000;

/** What the router has learned about one account's concurrency. Every field is a count or epoch ms. */
export interface LearnedLimit {
  /** Requests the account may have in flight at once (≥ 1). */
  readonly limit: number;
  /** Successes sent with the limit in full use since the last change, toward the next raise (< `limit`). */
  readonly credit: number;
  /**
   * The in-flight count when the throttle that set the limit came back (itself included): the
   * account refused a request while that many ran. A limit grown past it is forgotten.
   */
  readonly throttledAt: number;
  /** The last throttle, epoch ms. */
  readonly lastThrottleAtMs: number;
  /** No new request goes to the account before this, epoch ms (0: no pause). */
  readonly pausedUntilMs: number;
}

/**
 * The limit after a concurrency throttle of a request that was sent while `inflightAtSend`
 * requests (itself included) were in flight on the account and came back while
 * `inflightAtAnswer` were, at `nowMs`:
 *
 * - a throttle sent within the limit (`inflightAtSend ≤ limit`, or with no limit yet) sets the
 *   limit to one below `inflightAtSend` (at least 1): the throttle is direct evidence that that
 *   many at once were too many, so there is no blind halving. It restarts the success count, and
 *   `inflightAtAnswer` becomes `throttledAt` (requests sent together reach the upstream in any
 *   order, so the count at sending can be lower than the one the upstream refused; the count at
 *   the answer is the most it can have been);
 * - a throttle sent above the limit was sent before the limit was cut (stale): it changes nothing,
 *   so the many throttles of one over-full moment cut the limit once, not once each;
 * - a throttle at one in flight (a rate throttle: the limit cannot go lower) also pauses new
 *   requests to the account for {@link RATE_THROTTLE_PAUSE_MS}.
 */
export function limitAfterThrottle(current: LearnedLimit | undefined, inflightAtSend: number, inflightAtAnswer: number, nowMs: number): LearnedLimit {
  const sent = Math.max(1, Math.floor(inflightAtSend));
  if (current !== undefined && sent > current.limit) return current;
  return {
    limit: Math.max(1, sent - 1),
    credit: 0,
    throttledAt: Math.max(sent, Math.floor(inflightAtAnswer)),
    lastThrottleAtMs: nowMs,
    pausedUntilMs: sent <= 1 ? nowMs + RATE_THROTTLE_PAUSE_MS : 0,
  };
}

/**
 * The limit after a success (an answer committed) of a request sent while `inflightAtSend`
 * requests (itself included) were in flight. Only a success with the limit in full use
 * (`inflightAtSend ≥ limit`) counts: one below it proves nothing about the limit. After `limit`
 * such successes the limit rises by one (additive increase: one step per window of answers, so a
 * fixed upstream limit costs one probing throttle per `limit` successes); a limit that rises past
 * `throttledAt` is forgotten (undefined): the account serves more at once than were running when
 * it last refused one.
 */
export function limitAfterSuccess(current: LearnedLimit, inflightAtSend: number): LearnedLimit | undefined {
  if (inflightAtSend < current.limit) return current;
  const credit = current.credit + 1;
  if (credit < current.limit) return { ...current, credit };
  const limit = current.limit + 1;
  return limit > current.throttledAt ? undefined : { ...current, limit, credit: 0 };
}

/** `current` while it holds at `nowMs`; undefined once {@link LIMIT_FORGET_AFTER_MS} have passed since its last throttle. */
export function liveLimit(current: LearnedLimit | undefined, nowMs: number): LearnedLimit | undefined {
  return current !== undefined && nowMs - current.lastThrottleAtMs < LIMIT_FORGET_AFTER_MS ? current : undefined;
}
