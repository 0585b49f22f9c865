/**
 * The `anthropic-ratelimit-unified-*` response headers of a subscription (OAuth) account.
 * Wire units: utilisation is a FRACTION as a decimal string, resets are epoch SECONDS.
 */
import { UsageWindow, WindowStatus, claimName, worseStatus } from './windows';

/** Header name prefix of the unified rate-limit headers. */
export const UNIFIED_PREFIX = 'anthropic-ratelimit-unified-';

/** The windows of one account, as the header builder needs them. */
export interface AccountWindows {
  fiveHour: UsageWindow;
  sevenDay: UsageWindow;
  /** Model-scoped weekly windows (`7d_<family>`). */
  scoped: UsageWindow[];
}

/** Options of {@link unifiedHeaders}. */
export interface UnifiedHeaderOptions {
  /** Family of the request's model; its scoped window can become the representative claim when rejected. */
  family?: string | null;
  /** Report every status as `allowed` (a throttle 429 says nothing about capacity). */
  forceAllowed?: boolean;
  /** Leave out unified `status`, `reset` and `representative-claim` (only per-window headers). */
  perWindowOnly?: boolean;
}

/** A utilisation FRACTION as the wire shows it (at most 6 decimals, no trailing zeros). */
export function formatFraction(fraction: number): string {
  return String(Number(fraction.toFixed(6)));
}

/** Epoch ms → epoch SECONDS as a string, rounded up so a client never retries before the reset. */
export function epochSeconds(ms: number): string {
  return String(Math.ceil(ms / 1000));
}

/** The window that binds this account now, and the account-level verdict. */
export function bindingWindow(w: AccountWindows, family?: string | null): { window: UsageWindow; status: WindowStatus } {
  const main = [w.fiveHour, w.sevenDay];
  const rejected = main.filter((x) => x.status === 'rejected');
  if (rejected.length > 0) {
    // The one that keeps the account out longest binds.
    const window = rejected.reduce((a, b) => ((b.resetAtMs ?? 0) > (a.resetAtMs ?? 0) ? b : a));
    return { window, status: 'rejected' };
  }
  const status = worseStatus(w.fiveHour.status, w.sevenDay.status);
  const scoped = family ? w.scoped.find((s) => s.name === `7d_${family}`) : undefined;
  if (scoped && scoped.status === 'rejected') return { window: scoped, status };
  const window = w.sevenDay.utilization > w.fiveHour.utilization ? w.sevenDay : w.fiveHour;
  return { window, status };
}

/**
 * Build the unified headers. Unified status: `rejected` if the 5h or 7d window is rejected,
 * else the worse of the two (a rejected model-scoped window shows only in its own
 * `7d_<family>-status`, and as representative claim for a request of that family).
 */
export function unifiedHeaders(w: AccountWindows, opts: UnifiedHeaderOptions = {}): Record<string, string> {
  const h: Record<string, string> = {};
  const st = (s: WindowStatus): WindowStatus => (opts.forceAllowed ? 'allowed' : s);
  if (!opts.perWindowOnly) {
    const b = bindingWindow(w, opts.family);
    h[`${UNIFIED_PREFIX}status`] = st(b.status);
    h[`${UNIFIED_PREFIX}reset`] = epochSeconds(b.window.resetAtMs ?? 0);
    h[`${UNIFIED_PREFIX}representative-claim`] = claimName(b.window.name);
  }
  for (const win of [w.fiveHour, w.sevenDay, ...w.scoped]) {
    h[`${UNIFIED_PREFIX}${win.name}-status`] = st(win.status);
    h[`${UNIFIED_PREFIX}${win.name}-utilization`] = formatFraction(win.utilization);
    h[`${UNIFIED_PREFIX}${win.name}-reset`] = epochSeconds(win.resetAtMs ?? 0);
  }
  h[`${UNIFIED_PREFIX}overage-status`] = 'rejected';
  h[`${UNIFIED_PREFIX}overage-disabled-reason`] = 'org_level_disabled';
  return h;
}
