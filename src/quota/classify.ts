/**
 * What an upstream response means for routing. Pure: the time is an argument.
 *
 * Source: docs/anthropic-api.md#kinds-of-429, docs/anthropic-api.md#other-statuses and
 * docs/anthropic-api.md#streaming (errors inside a 200 SSE stream). The result type is `ResponseClass` (./types.ts).
 */
import { DEFAULT_THROTTLE_MS, WINDOW_EXHAUSTED_FALLBACK_MS } from './constants';
import { isFamilyKey, modelFamily, namesModelFamily } from './family';
import { type HeaderBag, lowerCaseHeaders, parseUnifiedHeaders } from './headers';
import { isRejectionStatus, normalizeStatus, showsAllowed } from './status';
import { parseRetryAfterMs } from './time';
import type { QuotaSnapshot, ResponseClass } from './types';

/** The input of {@link classifyResponse}. */
export interface ClassifyInput {
  /** HTTP status code of the upstream response. */
  status: number;
  /** Upstream response headers; names in any case, arrays contribute their first element. */
  headers: HeaderBag;
  /** The (small) error body as text, if read; JSON `{"type":"error","error":{"type","message"}}` is expected but not required. */
  body?: string;
  /** Current time, epoch ms: a reset must be later than this to count as "future". */
  nowMs: number;
  /** The requested model id (e.g. `claude-sonnet-4-5`); picks the family when several scoped windows are rejected. */
  model?: string;
}

/** The body text Anthropic sends when an account lacks the extra-usage entitlement (docs/anthropic-api.md#kinds-of-429, kind 5). */
const ENTITLEMENT = /extra usage is required/i;

/** `error.type` of an Anthropic error body, or undefined when the body is not such JSON. Never throws. */
export function errorTypeOf(body: string | undefined): string | undefined {
  if (typeof body !== 'string' || body.trim() === '') return undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed === null || typeof parsed !== 'object') return undefined;
    const error = (parsed as Record<string, unknown>)['error'];
    if (error === null || typeof error !== 'object') return undefined;
    const type = (error as Record<string, unknown>)['type'];
    return typeof type === 'string' ? type : undefined;
  } catch {
    return undefined;
  }
}

/** `seven_day_<family>` in a representative claim → the family; other claims → undefined. */
function claimFamily(claim: string | undefined): string | undefined {
  const m = claim ? /^seven_day_(.+)$/.exec(claim) : null;
  return m && isFamilyKey(m[1]) ? m[1] : undefined;
}

/**
 * The exhaustion a snapshot shows (429 kinds 1 and 2 of docs/anthropic-api.md#kinds-of-429), or undefined.
 *
 * - 5h and/or 7d status a rejection (`rejected`/`throttled`) → `window_exhausted` naming them, until
 *   the LATEST of their resets (each rejected window without a future reset counts as now + 10 min;
 *   a rejected unified status that is not model-scoped adds its reset too);
 * - else unified status `rejected` and the representative claim account-wide (`five_hour`,
 *   `seven_day`, anything not `seven_day_<family>`) → `window_exhausted` `['unified']` until the
 *   unified reset, or now + 10 min without a future one;
 * - else a `7d_<family>` window rejected, or unified `rejected` with claim `seven_day_<family>`
 *   (or with no claim while a scoped window is rejected) → `model_scoped_exhausted` for that
 *   family (the requested model's family when it is among them), until its future reset if known;
 *   a window whose key names no model family (`7d_oi`) is reported as the requested model's family,
 *   with the key as `window`.
 */
function exhaustion(snap: QuotaSnapshot, nowMs: number, model: string | undefined): ResponseClass | undefined {
  const future = (reset: number | undefined): number | undefined => (reset !== undefined && reset > nowMs ? reset : undefined);
  const fallback = nowMs + WINDOW_EXHAUSTED_FALLBACK_MS;
  const claimFam = claimFamily(snap.representativeClaim);
  const scoped = snap.scoped ?? {};
  const scopedRejected = Object.keys(scoped).filter((f) => isRejectionStatus(scoped[f].status));
  const unifiedRejected = normalizeStatus(snap.unifiedStatus) === 'rejected';
  const unifiedIsScoped = unifiedRejected && (claimFam !== undefined || (snap.representativeClaim === undefined && scopedRejected.length > 0));

  const windows: string[] = [];
  const untils: number[] = [];
  if (isRejectionStatus(snap.session?.status)) {
    windows.push('5h');
    untils.push(future(snap.session?.resetAtMs) ?? fallback);
  }
  if (isRejectionStatus(snap.weekly?.status)) {
    windows.push('7d');
    untils.push(future(snap.weekly?.resetAtMs) ?? fallback);
  }
  if (windows.length > 0) {
    const unifiedReset = future(snap.unifiedResetAtMs);
    if (unifiedRejected && !unifiedIsScoped && unifiedReset !== undefined) untils.push(unifiedReset);
    return { kind: 'window_exhausted', untilMs: Math.max(...untils), windows };
  }
  if (unifiedRejected && !unifiedIsScoped) {
    return { kind: 'window_exhausted', untilMs: future(snap.unifiedResetAtMs) ?? fallback, windows: ['unified'] };
  }
  const candidates = [...scopedRejected];
  if (unifiedIsScoped && claimFam !== undefined && !candidates.includes(claimFam)) candidates.push(claimFam);
  if (candidates.length === 0) return undefined;
  const wanted = modelFamily(model);
  const key = wanted !== undefined && candidates.includes(wanted) ? wanted : claimFam !== undefined && candidates.includes(claimFam) ? claimFam : candidates[0];
  const untilMs =
    future(Object.hasOwn(scoped, key) ? scoped[key].resetAtMs : undefined) ??
    (unifiedIsScoped && (key === claimFam || claimFam === undefined) ? future(snap.unifiedResetAtMs) : undefined);
  // A window named by no model family (`7d_oi`) that refused this request holds the requested model:
  // bar that model's family, or the rejection would bar nothing.
  const cls: Extract<ResponseClass, { kind: 'model_scoped_exhausted' }> =
    wanted !== undefined && key !== wanted && !namesModelFamily(key)
      ? { kind: 'model_scoped_exhausted', family: wanted, window: key }
      : { kind: 'model_scoped_exhausted', family: key };
  if (untilMs !== undefined) cls.untilMs = untilMs;
  return cls;
}

/**
 * Classifies one upstream response (docs/anthropic-api.md#kinds-of-429):
 *
 * - 2xx → `success` (even with `status: rejected` headers: that is a 200 served as paid overage);
 * - 529, or an error body whose `error.type` is `overloaded_error` → `overloaded`
 *   (`retryAfterMs` from `retry-after`, if any);
 * - 429, in this order: body "Extra usage is required" → `entitlement`; a rejected window →
 *   `window_exhausted` / `model_scoped_exhausted` (see the rules on `exhaustion` in this file; a
 *   rejected window wins over `retry-after`); `retry-after` → `throttle` with its duration in ms;
 *   unified headers that show the account allowed (`showsAllowed`, ./status.ts) and no
 *   `retry-after` → `concurrency_throttle` (too many requests at once on the account); no
 *   `anthropic-ratelimit-*` header at all → `request_scoped`; other rate-limit headers without a
 *   rejection and without `retry-after` → `throttle` of {@link DEFAULT_THROTTLE_MS} (10 s);
 * - 401 → `unauthorized`; 403 → `forbidden`; other 4xx and 3xx → `client_error` (returned);
 * - 5xx → `server_error` (`retryAfterMs` if `retry-after` is given); any other status
 *   (1xx, 0, ≥ 600, not an integer) → `server_error` as an unexpected upstream answer.
 *
 * Never throws.
 */
export function classifyResponse(input: ClassifyInput): ResponseClass {
  const { status, nowMs } = input;
  if (status >= 200 && status <= 299) return { kind: 'success' };
  const h = lowerCaseHeaders(input.headers);
  const retryAfterMs = parseRetryAfterMs(h.get('retry-after'), nowMs);
  const errorType = errorTypeOf(input.body);

  if (status === 529 || errorType === 'overloaded_error') {
    return retryAfterMs === undefined ? { kind: 'overloaded' } : { kind: 'overloaded', retryAfterMs };
  }
  if (status === 429) {
    if (typeof input.body === 'string' && ENTITLEMENT.test(input.body)) return { kind: 'entitlement' };
    const snap = parseUnifiedHeaders(input.headers, nowMs);
    const exhausted = snap ? exhaustion(snap, nowMs, input.model) : undefined;
    if (exhausted) return exhausted;
    if (retryAfterMs !== undefined) return { kind: 'throttle', retryAfterMs };
    if (snap && showsAllowed(snap)) return { kind: 'concurrency_throttle' };
    if (![...h.keys()].some((k) => k.startsWith('anthropic-ratelimit-'))) return { kind: 'request_scoped' };
    return { kind: 'throttle', retryAfterMs: DEFAULT_THROTTLE_MS };
  }
  if (status === 401) return { kind: 'unauthorized' };
  if (status === 403) return { kind: 'forbidden' };
  if (Number.isInteger(status) && status >= 400 && status <= 499) return { kind: 'client_error' };
  // A redirect is deterministic, not transient: return it rather than cool the account.
  if (Number.isInteger(status) && status >= 300 && status <= 399) return { kind: 'client_error' };
  return retryAfterMs === undefined ? { kind: 'server_error' } : { kind: 'server_error', retryAfterMs };
}

/**
 * Classifies an `event: error` seen inside a 200 SSE stream before any content
 * (docs/anthropic-api.md#streaming: `{"type":"error","error":{"type":"overloaded_error"|"rate_limit_error"|"api_error"}}`):
 * `overloaded_error` → `overloaded` (no retry-after); `rate_limit_error` → `throttle` of
 * {@link DEFAULT_THROTTLE_MS} (10 s); `api_error` and anything else → `server_error`.
 * Comparison is case-insensitive and trimmed. `_nowMs` (epoch ms) is accepted for symmetry with
 * {@link classifyResponse} and is not needed today.
 */
export function classifyStreamError(errorType: string, _nowMs: number): ResponseClass {
  const t = typeof errorType === 'string' ? errorType.trim().toLowerCase() : '';
  if (t === 'overloaded_error') return { kind: 'overloaded' };
  if (t === 'rate_limit_error') return { kind: 'throttle', retryAfterMs: DEFAULT_THROTTLE_MS };
  return { kind: 'server_error' };
}
