/**
 * Every threshold, floor and ceiling the quota module uses, in one place.
 *
 * All durations are MILLISECONDS; all utilisation thresholds are FRACTIONS (0–1).
 * Protocol facts cited from docs/anthropic-api.md#rate-limit-evidence
 * and docs/routing.md#freshness.
 */

/** A snapshot (or a window inside one) older than this is stale: 15 min, in ms (docs/routing.md#freshness). */
export const STALE_AFTER_MS = 15 * 60_000;

/**
 * Two reset times closer than this describe the same window: 60 s, in ms. Successive usage
 * endpoint readings can differ in `resets_at` by a fraction of a second; the window has rolled
 * over only when the reset moved forward by at least this much (docs/anthropic-api.md#usage-endpoint).
 */
export const RESET_JITTER_MS = 60_000;

/**
 * A numeric reset above this is already epoch MILLISECONDS; at or below it is epoch SECONDS
 * (docs/anthropic-api.md#units: values above ~4.1e9 are already ms). 4.1e9 s is the year 2099;
 * 4.1e9 ms is February 1970, so the two ranges never overlap for real timestamps.
 */
export const EPOCH_SECONDS_MAX = 4.1e9;

/** The largest epoch-ms value a JavaScript Date can hold (±8.64e15 ms); anything beyond is garbage. */
export const MAX_EPOCH_MS = 8.64e15;

/**
 * A header utilisation above this FRACTION is kept but reported as an anomaly (it probably means
 * someone sent percent): docs/anthropic-api.md#units (a header value above 1.5 is logged as an anomaly).
 */
export const UTILIZATION_ANOMALY_FRACTION = 1.5;

/** Usage-endpoint utilisation (as a FRACTION) at or above which a window is derived `rejected`. */
export const USAGE_REJECTED_FRACTION = 1.0;

/** Usage-endpoint utilisation (as a FRACTION) at or above which a window is derived `allowed_warning`. */
export const USAGE_WARNING_FRACTION = 0.8;

/** A rejected window without a usable future reset cools the account for this long: 10 min, in ms. */
export const WINDOW_EXHAUSTED_FALLBACK_MS = 10 * 60_000;

/**
 * How far the usage endpoint may lag the upstream's limiter: 5 min, in ms. A usage reading clears a
 * `window_exhausted` cooldown only when its request was sent at least this long after the cooldown
 * was set; an earlier one only suggests a recovery probe (docs/routing.md#recovery). Equal to the
 * poller's spacing per account, so the next reading of a cooled account is past it.
 */
export const USAGE_EVIDENCE_LAG_MS = 5 * 60_000;

/** A `window_exhausted` cooldown never lasts longer than this from now: 8 days, in ms (a 7d window plus slack). */
export const WINDOW_EXHAUSTED_CEILING_MS = 8 * 24 * 60 * 60_000;

/** A `throttle` whose `retry-after` is missing or unreadable cools for this long: 2 s, in ms (a given `retry-after` is followed, however short). */
export const THROTTLE_FLOOR_MS = 2_000;

/** A `throttle` cooldown lasts at most this long: 15 min, in ms (a burst limit, not a window). */
export const THROTTLE_CEILING_MS = 15 * 60_000;

/**
 * The throttle assumed when a rate-limit signal carries no `retry-after`: 10 s, in ms. Used for a
 * `rate_limit_error` event inside a 200 SSE stream (docs/anthropic-api.md#streaming) and for a 429 that
 * carries rate-limit headers with no rejected window and no `retry-after`.
 */
export const DEFAULT_THROTTLE_MS = 10_000;

/** An `overloaded` cooldown without `retry-after` lasts this long: 5 s, in ms (docs/routing.md#cooldowns). */
export const OVERLOADED_DEFAULT_MS = 5_000;

/** An `overloaded` cooldown lasts at most this long: 60 s, in ms (529 is Anthropic-wide, not the account). */
export const OVERLOADED_CEILING_MS = 60_000;

/** A `forbidden` (403) cooldown lasts this long: 10 min, in ms. */
export const FORBIDDEN_COOLDOWN_MS = 10 * 60_000;

/** A `server_error` (5xx) without a usable `retry-after` cools for this long: 2 s, in ms (a given `retry-after` is followed). */
export const SERVER_ERROR_COOLDOWN_MS = 2_000;

/** A `server_error` cooldown taken from a `retry-after` lasts at most this long: 60 s, in ms. */
export const SERVER_ERROR_CEILING_MS = 60_000;
