/**
 * The one rule for how the router tells a client to come back when it answers a request itself
 * with 429, 503 or 529: no usable account, the waiting room full, an account's local cap, the
 * memory budget for request bodies, a proxy still starting. Pure: no I/O, no clock.
 *
 * Claude Code 2.1.328 waits out a `retry-after` of at most 60 s and retries (ten times by
 * default, a minute or a little more apart), but stops the prompt at once past 60 s
 * (docs/claude-code-client.md#error-behaviour-e). So a pause the pool gets over within the
 * client-retry horizon is answered with `retry-after` capped at 60 s: the client keeps asking
 * until an account serves again. A longer wait, or usage windows on every account, is final: its
 * real length, and — for a usage window — the window's claim, so the user sees their limit and
 * when it resets.
 */

/** The largest `retry-after` Claude Code 2.1.328 waits out instead of giving up, SECONDS. */
export const CLIENT_RETRY_AFTER_MAX_S = 60;

/** How to word a wait to the client. */
export interface ClientRetry {
  /**
   * true: keep the client retrying — throttle-shaped, no rejected-window headers, `retryAfterS`
   * at most {@link CLIENT_RETRY_AFTER_MAX_S}. false: the wait is final — `retryAfterS` is the
   * whole wait, and a usage window may be claimed.
   */
  retry: boolean;
  /** The `retry-after` to send, whole SECONDS, at least 1. */
  retryAfterS: number;
  /** The real wait, whole SECONDS (rounded up), at least 1: what the message names. */
  waitS: number;
}

/**
 * How to answer a client that must wait `waitMs` (ms, from now) for the router to serve it.
 *
 * Within `horizonMs` the answer keeps the client retrying — unless every account is held by a
 * claimed usage window (5-hour, weekly, a model's weekly window, an account-wide rejection): the
 * user has hit their limit everywhere, and is told so with the reset, however soon it comes.
 * Past the horizon, or with `horizonMs` 0 (off), the answer is final.
 * @param waitMs ms until the earliest moment the router expects to serve (≥ 0; Infinity: unknown, final)
 * @param horizonMs `routing.client-retry-horizon-ms` (ms; 0 = off: every wait is final)
 * @param claimedEverywhere whether what every account waits for last is a usage window it can be claimed by
 */
export function clientRetry(waitMs: number, horizonMs: number, claimedEverywhere = false): ClientRetry {
  const waitS = Number.isFinite(waitMs) ? Math.max(1, Math.ceil(waitMs / 1000)) : CLIENT_RETRY_AFTER_MAX_S;
  const retry = horizonMs > 0 && waitMs <= horizonMs && !claimedEverywhere;
  return { retry, retryAfterS: retry ? Math.min(waitS, CLIENT_RETRY_AFTER_MAX_S) : waitS, waitS };
}
