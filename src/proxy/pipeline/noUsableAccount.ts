/**
 * The answer when no account can take a request: 429 with `retry-after` set
 * to the earliest moment an account becomes usable, and a message naming that
 * account and the window it is waiting for — or, when that account only pauses
 * after Anthropic's own trouble (529 overloaded, 5xx), the status of that
 * trouble: it is not a rate limit of the user's.
 */
import type { Cooldown, CooldownReason, QuotaSnapshot, QuotaWindow } from '../../quota/types';
import { isRejectionStatus } from '../../quota/status';
import type { AccountMetrics } from '../../routing/metrics';

/** One account's state as this module needs it. */
export interface RecoveryInput {
  label: string;
  metrics: AccountMetrics;
  cooldown: Cooldown | undefined;
  snapshot: QuotaSnapshot | undefined;
}

/** When an account becomes usable again and why it waits. */
export interface Recovery {
  label: string;
  /** Epoch ms; Infinity when it cannot recover by waiting (needs sign-in). */
  atMs: number;
  /** `5h window`, `7d window`, `7d_sonnet window`, `throttle`, `overloaded`, `needs sign-in`, … */
  what: string;
  /** The cooldown it waits for, when a cooldown (not a quota window) is what blocks it. */
  cooldownReason?: CooldownReason;
}

function windowBlocks(w: QuotaWindow | undefined, now: number): w is QuotaWindow & { resetAtMs: number } {
  return !!w && w.resetAtMs !== undefined && w.resetAtMs > now && (isRejectionStatus(w.status) || (w.utilization ?? 0) >= 1);
}

/** The earliest time `a` is usable again (at or after `now`). */
export function recoveryOf(a: RecoveryInput, now: number): Recovery {
  const m = a.metrics;
  if (m.usable) return { label: a.label, atMs: now, what: 'usable' };
  if (m.unusableReason === 'needs_sign_in') return { label: a.label, atMs: Infinity, what: 'needs sign-in' };
  if (m.unusableReason === 'cooldown' && a.cooldown) {
    const what = a.cooldown.windows?.length ? `${a.cooldown.windows.join('+')} window` : a.cooldown.reason.replace(/_/g, ' ');
    return { label: a.label, atMs: a.cooldown.untilMs, what, cooldownReason: a.cooldown.reason };
  }
  const s = a.snapshot;
  const blocked: Array<[string, number]> = [];
  if (s) {
    if (windowBlocks(s.session, now)) blocked.push(['5h', s.session.resetAtMs]);
    if (windowBlocks(s.weekly, now)) blocked.push(['7d', s.weekly.resetAtMs]);
    if (m.unusableReason === 'scoped_rejected' && Number.isFinite(m.scopedResetMs)) blocked.push(['model-scoped', m.scopedResetMs]);
    if (blocked.length === 0 && s.unifiedResetAtMs && s.unifiedResetAtMs > now) blocked.push(['unified', s.unifiedResetAtMs]);
  }
  if (blocked.length === 0) return { label: a.label, atMs: Infinity, what: 'unknown reset' };
  // Usable only once every blocking window has reset.
  const last = blocked.reduce((x, y) => (y[1] > x[1] ? y : x));
  return { label: a.label, atMs: last[1], what: `${last[0]} window` };
}

/** Status, headers and message for "no usable account". */
export function noUsableAccountAnswer(accounts: readonly RecoveryInput[], now: number) {
  const recoveries = accounts.map((a) => recoveryOf(a, now)).sort((x, y) => (x.atMs < y.atMs ? -1 : x.atMs > y.atMs ? 1 : 0));
  const first = recoveries[0];
  if (!first || !Number.isFinite(first.atMs)) {
    const signIn = recoveries.filter((r) => r.what === 'needs sign-in').map((r) => `"${r.label}"`);
    if (accounts.length > 0 && signIn.length === accounts.length) {
      return {
        status: 401,
        type: 'authentication_error' as const,
        retryAfterS: undefined,
        windowHeaders: {},
        message: `Claude Router: every account needs sign-in (${signIn.join(', ')}). Sign in again from the Claude Router view, or update the tokens in the config file.`,
      };
    }
    const why = accounts.length === 0 ? 'No accounts are configured or enabled.' : 'Every account needs sign-in or has no known reset.';
    return { status: 429, type: 'rate_limit_error' as const, retryAfterS: 60, windowHeaders: {}, message: `Claude Router: no usable account. ${why}` };
  }
  const retryAfterS = Math.max(1, Math.ceil((first.atMs - now) / 1000));
  const when = new Date(first.atMs).toISOString();
  const upstreamTrouble = first.cooldownReason === 'overloaded' || first.cooldownReason === 'server_error';
  if (upstreamTrouble) {
    // Claude Code retries 529 and 5xx with backoff and shows them as Anthropic's trouble, which
    // they are; a 429 would read as the user's own limit.
    const overloaded = first.cooldownReason === 'overloaded';
    return {
      status: overloaded ? 529 : 503,
      type: overloaded ? ('overloaded_error' as const) : ('api_error' as const),
      retryAfterS,
      windowHeaders: {},
      message:
        `Claude Router: Anthropic ${overloaded ? 'is overloaded' : 'answered with server errors'}; every account is pausing. ` +
        `The first to be tried again is "${first.label}" at ${when}, in ${formatDuration(retryAfterS)}.`,
    };
  }
  return {
    status: 429,
    type: 'rate_limit_error' as const,
    retryAfterS,
    windowHeaders: unifiedHeadersFor(first),
    message:
      `Claude Router: all ${accounts.length} account(s) are rate-limited or unavailable. ` +
      `The earliest to recover is "${first.label}" (${first.what}) at ${when}, in ${formatDuration(retryAfterS)}.`,
  };
}

/** 3725 → `1 h 2 min`; 42 → `42 s`; 2 days or more → `3 d`. */
export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const m = Math.round(seconds / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h >= 48) return `${Math.round(m / 1440)} d`;
  return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`;
}

/**
 * When the pool waits for a usage window, say so the way Anthropic does
 * (`anthropic-ratelimit-unified-status: rejected` with the reset in epoch
 * seconds), so Claude Code shows "you've hit your limit · resets …" instead of
 * retrying a limit that will not lift for hours. Short waits (throttle,
 * overload) get none: Claude Code's own retry with `retry-after` fits them.
 */
function unifiedHeadersFor(r: Recovery): Record<string, string> {
  const claim = r.what.startsWith('5h') ? 'five_hour' : r.what.startsWith('7d') ? 'seven_day' : undefined;
  if (!claim) return {};
  const reset = String(Math.ceil(r.atMs / 1000));
  return {
    'anthropic-ratelimit-unified-status': 'rejected',
    'anthropic-ratelimit-unified-reset': reset,
    'anthropic-ratelimit-unified-representative-claim': claim,
  };
}
