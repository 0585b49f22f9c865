/**
 * Who may talk to the proxy: loopback clients that carry the local key, from
 * a loopback `Host` (DNS-rebinding defence), never a browser page (`Origin`).
 */
import type { IncomingMessage } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';

const LOOPBACK_HOST = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])(:\d{1,5})?$/i;

/**
 * Refuses foreign `Host` headers and any browser `Origin`. Returns the reason
 * (safe to show) or null when the request may proceed.
 */
export function checkOrigin(req: IncomingMessage): string | null {
  const host = req.headers.host;
  if (!host || !LOOPBACK_HOST.test(host)) return 'Claude Router only answers requests addressed to a loopback host.';
  if (req.headers.origin !== undefined) return 'Claude Router does not answer browser requests.';
  return null;
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

/** The expected key's digest, computed once per key rather than per request. */
let cached: { key: string; digest: Buffer } | undefined;
function keyDigest(key: string): Buffer {
  if (cached?.key !== key) cached = { key, digest: digest(key) };
  return cached.digest;
}

/**
 * True when the request carries the local key in `x-claude-router-key`,
 * `authorization: Bearer <key>` or `x-api-key`. Constant-time comparison.
 */
export function checkClientKey(req: IncomingMessage, key: string): boolean {
  const want = keyDigest(key);
  const candidates: string[] = [];
  const h = req.headers;
  if (typeof h['x-claude-router-key'] === 'string') candidates.push(h['x-claude-router-key']);
  if (typeof h.authorization === 'string' && /^bearer\s+/i.test(h.authorization)) candidates.push(h.authorization.replace(/^bearer\s+/i, ''));
  if (typeof h['x-api-key'] === 'string') candidates.push(h['x-api-key']);
  return candidates.some((c) => timingSafeEqual(digest(c.trim()), want));
}
