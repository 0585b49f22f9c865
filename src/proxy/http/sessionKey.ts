/**
 * The session key (the affinity key) of a Claude Code request, in priority
 * order (docs/claude-code-client.md#session-identity):
 *  1. header `x-claude-code-session-id`;
 *  2. `metadata.user_id` holding a JSON object with a `session_id` (Claude Code ≥ 2.1.78);
 *  3. the legacy `user_<hex>_account_<uuid or empty>_session_<uuid>` string.
 * Anything else has no session. Garbage never throws.
 */

/** Longest session id accepted (longer values are not Claude Code's and are ignored). */
const MAX_SESSION_ID = 200;
const PRINTABLE = /^[\x21-\x7e]+$/;

function clean(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const v = value.trim();
  return v.length > 0 && v.length <= MAX_SESSION_ID && PRINTABLE.test(v) ? v : null;
}

/**
 * Session id from the `x-claude-code-session-id` header's value (its first line when it was
 * repeated), or null. A comma-joined value counts by its first entry.
 */
export function sessionIdFromHeader(value: string | undefined): string | null {
  return clean(value?.split(',')[0]);
}

const LEGACY = /^user_[0-9a-f]+_account_[0-9a-f-]*_session_([0-9a-f-]+)$/i;

/** Session id from a `metadata.user_id` value (JSON form or legacy form), or null. */
export function sessionIdFromUserId(userId: unknown): string | null {
  if (typeof userId !== 'string' || userId.length > 4096) return null;
  const s = userId.trim();
  if (s.startsWith('{')) {
    try {
      const parsed = JSON.parse(s) as unknown;
      if (parsed && typeof parsed === 'object') return clean((parsed as Record<string, unknown>).session_id);
    } catch {
      return null;
    }
    return null;
  }
  const m = LEGACY.exec(s);
  return m ? clean(m[1]) : null;
}

/** Session id from a parsed request body (`metadata.user_id`), or null. */
export function sessionIdFromBody(body: unknown): string | null {
  if (!body || typeof body !== 'object') return null;
  const metadata = (body as Record<string, unknown>).metadata;
  if (!metadata || typeof metadata !== 'object') return null;
  return sessionIdFromUserId((metadata as Record<string, unknown>).user_id);
}
