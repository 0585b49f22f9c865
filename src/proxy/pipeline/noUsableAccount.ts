/**
 * The answer when no account can take a request: 429 with `retry-after` set
 * to the earliest moment every blocker of one account has cleared (see
 * src/routing/recovery.ts), and a message naming that account and the window
 * that clears last — or, when that account only pauses
 * after Anthropic's own trouble (529 overloaded, 5xx), the status of that
 * trouble: it is not a rate limit of the user's.
 */
import { formatDuration } from '../../quota/duration';
import { recoveriesByTime, type Recovery, type RecoveryInput } from '../../routing/recovery';

/** The client's answer: HTTP status, Anthropic error type, `retry-after` in SECONDS (absent: none), extra headers, message. */
export interface NoUsableAccountAnswer {
  status: 401 | 429 | 503 | 529;
  type: 'authentication_error' | 'rate_limit_error' | 'overloaded_error' | 'api_error';
  retryAfterS: number | undefined;
  windowHeaders: Record<string, string>;
  message: string;
}

/**
 * Status, headers and message for "no usable account" at `now` (epoch ms). `accounts` carry
 * metrics computed for the request (its model family decides which scoped window blocks).
 */
export function noUsableAccountAnswer(accounts: readonly RecoveryInput[], now: number): NoUsableAccountAnswer {
  const recoveries = recoveriesByTime(accounts, now);
  const first = recoveries[0];
  if (!first || !Number.isFinite(first.atMs)) {
    const signIn = recoveries.filter((r) => r.what === 'needs sign-in').map((r) => `"${r.label}"`);
    if (accounts.length > 0 && signIn.length === accounts.length) {
      return {
        status: 401,
        type: 'authentication_error',
        retryAfterS: undefined,
        windowHeaders: {},
        message: `Claude Router: every account needs sign-in (${signIn.join(', ')}). Sign in again from the Claude Router view, or update the tokens in the config file.`,
      };
    }
    const why =
      accounts.length === 0
        ? 'No accounts are configured or enabled.'
        : `When one recovers is unknown — sign in or wait for fresh quota data (${recoveries.map((r) => `"${r.label}" (${r.what})`).join(', ')}).`;
    // A minute lets the usage poller bring fresh evidence before Claude Code asks again.
    return { status: 429, type: 'rate_limit_error', retryAfterS: 60, windowHeaders: {}, message: `Claude Router: no usable account. ${why}` };
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
      type: overloaded ? 'overloaded_error' : 'api_error',
      retryAfterS,
      windowHeaders: {},
      message:
        `Claude Router: Anthropic ${overloaded ? 'is overloaded' : 'answered with server errors'}; every account is pausing. ` +
        `The first to be tried again is "${first.label}" at ${when}, in ${formatDuration(retryAfterS)}.`,
    };
  }
  return {
    status: 429,
    type: 'rate_limit_error',
    retryAfterS,
    windowHeaders: unifiedHeadersFor(first),
    message:
      `Claude Router: all ${accounts.length} account(s) are rate-limited or unavailable. ` +
      `The earliest to recover is "${first.label}" (${first.what}) at ${when}, in ${formatDuration(retryAfterS)}.`,
  };
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
