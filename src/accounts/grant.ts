/**
 * An account's OAuth grant: when a person signed in (`Credentials.grantedAtMs`), and what its age
 * means. Peers report the refresh chain of a grant ending about 28–29 days after the original
 * sign-in however often it is refreshed (unverified here: docs/anthropic-api.md#token-lifetimes),
 * so an old grant is worth signing in again before it ends, and an `invalid_grant` on one is most
 * likely that end. A refresh never changes the grant time; an imported token's is unknown.
 */

/** One day, ms. */
export const DAY_MS = 86_400_000;

/**
 * Past this age (days) an `invalid_grant` is explained as the likely end of the refresh chain even
 * when the warning is later or off (`routing.grant-warn-days`, default 21, above it or 0).
 */
export const GRANT_WALL_EXPLAIN_DAYS = 25;

/** The refresh chain's reported end, days after the sign-in (peers' report, unverified). */
export const REPORTED_CHAIN_DAYS = '28–29';

/**
 * Whole days since the grant (floor), or null when the grant time is unknown.
 * @param grantedAtMs epoch ms; null or undefined: unknown
 * @param now epoch ms
 */
export function grantAgeDays(grantedAtMs: number | null | undefined, now: number): number | null {
  if (grantedAtMs === null || grantedAtMs === undefined || !Number.isFinite(grantedAtMs)) return null;
  return Math.max(0, Math.floor((now - grantedAtMs) / DAY_MS));
}

/**
 * Whether a grant of `ageDays` (days) is past the warning threshold `warnDays` (days; 0: never).
 * An unknown age (null) never warns.
 */
export function grantWarns(ageDays: number | null, warnDays: number): boolean {
  return ageDays !== null && warnDays > 0 && ageDays >= warnDays;
}

/**
 * The grant's age in words: `signed in 12 d ago`, `signed in today`, `grant age unknown`.
 * @param ageDays whole days (grantAgeDays), null when unknown
 */
export function grantAgeText(ageDays: number | null): string {
  if (ageDays === null) return 'grant age unknown';
  return ageDays === 0 ? 'signed in today' : `signed in ${ageDays} d ago`;
}

/** The warning for a grant past the threshold (no token, labels only are added by the caller). */
export function grantWarningText(ageDays: number): string {
  return `signed in ${ageDays} d ago: sign in again soon (the refresh chain reportedly ends about ${REPORTED_CHAIN_DAYS} days after sign-in)`;
}

/**
 * Why a refresh answered `invalid_grant`, for the needs-sign-in reason and the log: on a grant at
 * least min(`warnDays`, GRANT_WALL_EXPLAIN_DAYS) days old (GRANT_WALL_EXPLAIN_DAYS when the warning
 * is off), the likely end of the refresh chain; otherwise (a young grant, an unknown one) only the
 * refusal. Only for a refusal of the newest refresh token: a superseded one (a refresh race another
 * process won) is adopted by the TokenManager and never reaches here.
 * @param grantedAtMs epoch ms; null or undefined: unknown
 * @param now epoch ms
 * @param warnDays `routing.grant-warn-days` (days; 0: off)
 */
export function invalidGrantReason(grantedAtMs: number | null | undefined, now: number, warnDays: number): string {
  const age = grantAgeDays(grantedAtMs, now);
  const wallDays = warnDays > 0 ? Math.min(warnDays, GRANT_WALL_EXPLAIN_DAYS) : GRANT_WALL_EXPLAIN_DAYS;
  if (age === null || age < wallDays) return 'refresh token was rejected (invalid_grant)';
  return `refresh token was rejected (invalid_grant), signed in ${age} d ago: likely the end of its refresh chain (reportedly about ${REPORTED_CHAIN_DAYS} days after sign-in); sign in again`;
}
