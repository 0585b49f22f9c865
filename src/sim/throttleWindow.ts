/**
 * A throttle lasting a window of time on one fake account: while it runs, every Messages request of
 * the account is answered 429 with a `retry-after` (the real API's burst throttle, unified
 * statuses all `allowed`), however many arrive — unlike the one-shot `throttle` fault.
 */

/** One account's scripted throttle window. */
export class ThrottleWindow {
  /** End of the window, epoch ms by the sim's clock; 0 when none runs. */
  private untilMs = 0;
  /** The `retry-after` every answer gives, SECONDS; undefined: the window's remaining time, rounded up. */
  private retryAfterS: number | undefined;

  /** Starts (or replaces) a window of `durationMs` ms at `nowMs` (epoch ms). */
  start(nowMs: number, durationMs: number, retryAfterS: number | undefined): void {
    this.untilMs = nowMs + durationMs;
    this.retryAfterS = retryAfterS;
  }

  clear(): void {
    this.untilMs = 0;
  }

  /** The `retry-after` (SECONDS, at least 1 when derived) for a request at `nowMs`, or undefined when no window runs. */
  retryAfterAt(nowMs: number): number | undefined {
    if (nowMs >= this.untilMs) return undefined;
    return this.retryAfterS ?? Math.max(1, Math.ceil((this.untilMs - nowMs) / 1000));
  }
}
