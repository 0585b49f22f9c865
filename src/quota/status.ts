/**
 * Status vocabulary shared by the unified headers and the routing rules.
 *
 * Source: docs/routing.md#statuses: `allowed` and `allowed_warning` mean allowed, `rejected` and
 * `throttled` mean rejected, and anything else is neither (it reads as "not allowed", yet is no
 * rejection).
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

/** The statuses a snapshot's account-wide verdict is read from. */
export interface AccountVerdict {
  unifiedStatus?: string;
  session?: { status?: string };
  weekly?: { status?: string };
}

/**
 * True when the evidence says the account is allowed: the unified status allowed or absent,
 * neither the 5h nor the 7d status a rejection, and at least one of the three allowed (evidence
 * with no status at all proves nothing).
 */
export function showsAllowed(v: AccountVerdict): boolean {
  const unified = normalizeStatus(v.unifiedStatus);
  if (unified !== undefined && !isAllowedStatus(unified)) return false;
  if (isRejectionStatus(v.session?.status) || isRejectionStatus(v.weekly?.status)) return false;
  return isAllowedStatus(v.unifiedStatus) || isAllowedStatus(v.session?.status) || isAllowedStatus(v.weekly?.status);
}
