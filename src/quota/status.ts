/**
 * Status vocabulary shared by the unified headers and the routing rules.
 *
 * Source: docs/routing.md#statuses: `allowed` and `allowed_warning` count as allowed;
 * `rejected` and `throttled` are rejections; any other value is "not allowed" but not a rejection.
 * Header values per docs/anthropic-api.md#unified-rate-limit-headers. Comparison is case-insensitive and ignores surrounding
 * whitespace.
 */

/** Trims and lower-cases a status; undefined for non-strings and blank strings. */
export function normalizeStatus(s: unknown): string | undefined {
  if (typeof s !== 'string') return undefined;
  const t = s.trim().toLowerCase();
  return t === '' ? undefined : t;
}

/** True for `allowed` and `allowed_warning` (any case, trimmed); false for everything else, including undefined. */
export function isAllowedStatus(s: string | undefined | null): boolean {
  const n = normalizeStatus(s);
  return n === 'allowed' || n === 'allowed_warning';
}

/** True for `rejected` and `throttled` (any case, trimmed); false for everything else, including undefined. */
export function isRejectionStatus(s: string | undefined | null): boolean {
  const n = normalizeStatus(s);
  return n === 'rejected' || n === 'throttled';
}
