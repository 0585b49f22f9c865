/**
 * The answer when no account can take a request: 429 with a message naming
 * the earliest moment every blocker of one account has cleared (see
 * src/routing/recovery.ts), that account and the window that clears last — or,
 * when that account only pauses after Anthropic's own trouble (529 overloaded,
 * 5xx), the status of that trouble: it is not a rate limit of the user's.
 * Whether the client is kept retrying (`retry-after` at most 60 s, no claim)
 * or told the wait is final (its real length, the window's claim) is
 * src/routing/clientRetry.ts's rule.
 */
import { isoTime } from '../../quota/time';
import { formatDuration } from '../../quota/duration';
import { clientRetry } from '../../routing/clientRetry';
import { DEFAULT_POLICY } from '../../routing/policy';
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
 * @param modelFamily the requested model's family (`opus`, `sonnet`, …): a model-scoped window is claimed under its name
 * @param horizonMs `routing.client-retry-horizon-ms` (ms; 0 = off): an earliest recovery within it keeps the client retrying
 */
export function noUsableAccountAnswer(
  accounts: readonly RecoveryInput[],
  now: number,
  modelFamily?: string,
  horizonMs: number = DEFAULT_POLICY.clientRetryHorizonMs,
): NoUsableAccountAnswer {
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
  const claimedEverywhere = recoveries.every((r) => claimOf(r, now, modelFamily) !== undefined);
  const { retry, retryAfterS, waitS } = clientRetry(first.atMs - now, horizonMs, claimedEverywhere);
  const when = isoTime(first.atMs) ?? 'an unknown time';
  // The real wait, and — when the client is kept retrying — how soon it is asked to.
  const wait = retry ? `in ${minutesAndSeconds(waitS)}; retry in ${retryAfterS} s` : `in ${formatDuration(waitS)}`;
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
        `The first to be tried again is "${first.label}" at ${when}, ${wait}.`,
    };
  }
  return {
    status: 429,
    type: 'rate_limit_error',
    retryAfterS,
    // A pause the pool gets over within the horizon is no limit of the user's: no claim, so Claude Code retries.
    windowHeaders: retry ? {} : unifiedHeadersFor(first, now, modelFamily),
    message:
      `Claude Router: all ${accounts.length} account(s) are rate-limited or unavailable. ` + `The earliest to recover is "${first.label}" (${first.what}) at ${when}, ${wait}.`,
  };
}

/** A wait within the horizon to the second: `45 s`, `1 min 40 s`, `10 min`. */
function minutesAndSeconds(s: number): string {
  const m = Math.floor(s / 60);
  if (m === 0) return `${s} s`;
  return s % 60 === 0 ? `${m} min` : `${m} min ${s % 60} s`;
}

/** A window at most this far from its reset can be the 5-hour one: 5 h, in ms. */
const FIVE_HOURS_MS = 5 * 3_600_000;

/**
 * When the pool waits for a usage window, say so the way Anthropic does
 * (`anthropic-ratelimit-unified-status: rejected`, the reset in epoch seconds and
 * the window as the representative claim), so Claude Code says "You've hit your
 * 5-hour / weekly / Opus limit · resets …" and stops, instead of retrying a limit
 * that will not lift for hours or — past a `retry-after` of 60 s — giving up with
 * "Server is temporarily limiting requests (not your usage limit)"
 * (docs/claude-code-client.md#error-behaviour-e). An account-wide rejection whose
 * window is unknown is named by its reset: within 5 h the 5-hour window, else the
 * weekly one. Short waits (throttle, overload, server errors) get none: Claude
 * Code's own retry with `retry-after` fits them.
 */
function unifiedHeadersFor(r: Recovery, now: number, modelFamily: string | undefined): Record<string, string> {
  const claim = claimOf(r, now, modelFamily);
  if (!claim) return {};
  return {
    'anthropic-ratelimit-unified-status': 'rejected',
    'anthropic-ratelimit-unified-reset': String(Math.ceil(r.atMs / 1000)),
    'anthropic-ratelimit-unified-representative-claim': claim,
  };
}

/** The representative claim of a usage-window blocker (`five_hour`, `seven_day`, `seven_day_<family>`), undefined for any other. */
function claimOf(r: Recovery, now: number, modelFamily: string | undefined): string | undefined {
  // `5h+7d window` (both rejected) lasts until the weekly reset: the weekly window is what it waits for.
  if (/(^|\+)7d\b/.test(r.what)) return 'seven_day';
  if (r.what.startsWith('5h')) return 'five_hour';
  if (r.what === 'model-scoped window') return modelFamily ? `seven_day_${modelFamily}` : undefined;
  if (r.what.startsWith('unified window')) return r.atMs - now <= FIVE_HOURS_MS ? 'five_hour' : 'seven_day';
  return undefined;
}
