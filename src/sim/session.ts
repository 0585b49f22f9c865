/**
 * Session identity of a Claude Code request, in the order the real client provides it:
 * header `x-claude-code-session-id`, then `metadata.user_id` as a JSON string with
 * `session_id`, then the legacy `user_<hex>_account_<uuid>_session_<uuid>` string.
 */

/** Session id of a request, or null when it carries none. */
export function sessionIdOf(headers: Record<string, string | string[] | undefined>, body: unknown): string | null {
  const h = headers['x-claude-code-session-id'];
  const hv = Array.isArray(h) ? h[0] : h;
  if (hv && hv.trim() !== '') return hv.trim();
  if (!body || typeof body !== 'object') return null;
  const meta = (body as { metadata?: unknown }).metadata;
  if (!meta || typeof meta !== 'object') return null;
  const uid = (meta as { user_id?: unknown }).user_id;
  if (typeof uid !== 'string') return null;
  if (uid.trimStart().startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(uid);
      const sid = parsed && typeof parsed === 'object' ? (parsed as { session_id?: unknown }).session_id : undefined;
      return typeof sid === 'string' && sid !== '' ? sid : null;
    } catch {
      return null;
    }
  }
  const legacy = /_session_([0-9a-zA-Z-]+)$/.exec(uid);
  return legacy ? legacy[1] : null;
}
