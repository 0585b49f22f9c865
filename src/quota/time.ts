/**
 * Reset and retry-after parsing. Every result is epoch MILLISECONDS (or a ms duration).
 * Pure: the current time is always an argument.
 *
 * Protocol facts: docs/anthropic-api.md#units — header resets are Unix epoch SECONDS; a numeric
 * value is taken as seconds unless it is above ~4.1e9, which can only be ms, and a non-numeric one
 * goes to Date.parse; the usage endpoint
 * sends ISO-8601 `resets_at`; `retry-after` is HTTP delta-seconds or an HTTP-date.
 */
import { EPOCH_SECONDS_MAX, MAX_EPOCH_MS } from './constants';
import { isDecimalString, parseDecimal } from './number';

/** ISO-8601 date or date-time, e.g. `2025-11-04`, `2025-11-04T04:59:59.943648+00:00`, `2025-11-04 04:59Z`. */
const ISO_DATE = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)\s*(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;
/** HTTP-date (RFC 9110 §5.6.7: IMF-fixdate, RFC 850 or asctime): starts with a day name, has hh:mm:ss. */
const HTTP_DATE = /^(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s.*\b\d{2}:\d{2}:\d{2}\b/i;

/**
 * Parses a date string that is ISO-8601 or an HTTP-date into epoch ms; anything else → undefined.
 * V8's `Date.parse` alone is far too lenient (`"Error 1"` parses as 2001), hence the shape checks.
 * An ISO date-time without an offset is read as UTC (not local time) so results never depend on
 * the host's time zone. The result is a positive integer ≤ 8.64e15.
 */
export function parseDateString(value: string): number | undefined {
  const s = value.trim();
  let ms: number;
  const iso = ISO_DATE.exec(s);
  if (iso) {
    const [, date, time, zone] = iso;
    if (time === undefined) {
      ms = Date.parse(date);
    } else {
      let offset = (zone ?? 'Z').toUpperCase();
      if (offset !== 'Z') offset = offset.length === 3 ? `${offset}:00` : `${offset.slice(0, 3)}:${offset.slice(-2)}`;
      ms = Date.parse(`${date}T${time.replace(',', '.')}${offset}`);
    }
  } else if (HTTP_DATE.test(s)) {
    ms = Date.parse(s);
  } else {
    return undefined;
  }
  if (!Number.isFinite(ms) || ms <= 0 || ms > MAX_EPOCH_MS) return undefined;
  return Math.round(ms);
}

/**
 * A reset time → epoch MILLISECONDS, or undefined when unknown.
 *
 * - number or numeric string: epoch SECONDS (fractions allowed) converted to ms, except values
 *   above {@link EPOCH_SECONDS_MAX} (~4.1e9), which are already ms;
 * - other strings: ISO-8601 or HTTP-date (see {@link parseDateString});
 * - garbage, `NaN`, negative, 0, empty, beyond the Date range, non-string/number types → undefined.
 *
 * The result is always a positive integer ≤ 8.64e15. Source: docs/anthropic-api.md#units.
 */
export function parseResetMs(value: unknown): number | undefined {
  if (typeof value === 'string' && !isDecimalString(value)) {
    return value.trim() === '' ? undefined : parseDateString(value);
  }
  const n = parseDecimal(value);
  if (n === undefined || n <= 0) return undefined;
  const ms = Math.round(n > EPOCH_SECONDS_MAX ? n : n * 1000);
  return ms > 0 && ms <= MAX_EPOCH_MS ? ms : undefined;
}

/**
 * A `retry-after` header → a DURATION in ms from `nowMs` (epoch ms), or undefined.
 *
 * - delta-seconds, fractional allowed (`"3"`, `"0.5"`) → seconds × 1000, rounded up to whole ms;
 *   a negative delta → 0;
 * - an HTTP-date (or ISO date) → that time minus `nowMs`, at least 0;
 * - absent, empty, garbage, or a value that is not finite in ms → undefined.
 *
 * Source: RFC 9110 §10.2.3, as used by Anthropic (docs/anthropic-api.md#kinds-of-429, throttle).
 */
export function parseRetryAfterMs(value: string | undefined, nowMs: number): number | undefined {
  if (typeof value !== 'string') return undefined;
  const s = value.trim();
  if (s === '') return undefined;
  if (isDecimalString(s)) {
    const seconds = parseDecimal(s);
    if (seconds === undefined) return undefined;
    const ms = Math.ceil(seconds * 1000);
    if (!Number.isFinite(ms)) return undefined;
    return ms > 0 ? ms : 0;
  }
  const at = parseDateString(s);
  if (at === undefined || !Number.isFinite(nowMs)) return undefined;
  return Math.max(0, at - nowMs);
}

/**
 * `ms` (epoch ms) as an ISO-8601 UTC string, or null when it is no date (absent, not finite, ≤ 0, or
 * past the last date JavaScript can hold, 8.64e15): times read from elsewhere (a shared store, a
 * saved state) are written without `Date#toISOString` ever throwing.
 */
export function isoTime(ms: number | undefined | null): string | null {
  return ms === undefined || ms === null || !Number.isFinite(ms) || ms <= 0 || ms > MAX_EPOCH_MS ? null : new Date(ms).toISOString();
}
