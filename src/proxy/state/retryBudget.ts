/**
 * The same-account retry budget: how many requests without a binding to a throttled account may
 * wait out its short throttle and retry it, per cooling window of that account, shared by every
 * concurrent request (docs/routing.md#same-account-retry). The rest move on at once, so one
 * throttle does not pile the router's traffic onto the account that just asked for less.
 */

/** Same-account retries per account per cooling window, across all requests. */
export const RETRIES_PER_COOLING_WINDOW = 2;

/** One account's current cooling window and the retries taken in it. */
interface CoolingWindow {
  /** When the window ends: the latest end of the cooldowns it saw, epoch ms. */
  untilMs: number;
  used: number;
}

/** Per-account retry slots, one window per cooldown episode. */
export class RetryBudget {
  private readonly windows = new Map<string, CoolingWindow>();

  /**
   * Takes a retry slot of `label`'s cooling window at `nowMs`. A window lasts from the throttle that
   * opens it to the end of the account's cooldown (`coolingUntilMs`, epoch ms; later throttles in
   * it stretch it); a throttle after it ended opens a new one with a fresh budget.
   * @returns whether a slot was free (and is now taken)
   */
  take(label: string, coolingUntilMs: number, nowMs: number): boolean {
    for (const [l, w] of this.windows) if (w.untilMs <= nowMs) this.windows.delete(l);
    const w = this.windows.get(label);
    if (!w) {
      this.windows.set(label, { untilMs: coolingUntilMs, used: 1 });
      return true;
    }
    w.untilMs = Math.max(w.untilMs, coolingUntilMs);
    if (w.used >= RETRIES_PER_COOLING_WINDOW) return false;
    w.used++;
    return true;
  }
}
