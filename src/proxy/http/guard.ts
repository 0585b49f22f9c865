/**
 * Who may talk to the proxy: loopback clients that carry the local key, from
 * a loopback `Host` (DNS-rebinding defence), never a browser page (`Origin`).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { ClientHead } from './clientHead';

const LOOPBACK_HOST = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])(:\d{1,5})?$/i;

/**
 * Refuses foreign `Host` headers and any browser `Origin`. Returns the reason
 * (safe to show) or null when the request may proceed.
 */
export function checkOrigin(head: ClientHead): string | null {
  const host = head.host;
  if (!host || !LOOPBACK_HOST.test(host)) return 'Claude Router only answers requests addressed to a loopback host.';
  if (head.origin !== undefined) return 'Claude Router does not answer browser requests.';
  return null;
}

/** The expected key's bytes, encoded once per key rather than per request. */
let cached: { key: string; bytes: Buffer } | undefined;
function keyBytes(key: string): Buffer {
  if (cached?.key !== key) cached = { key, bytes: Buffer.from(key) };
  return cached.bytes;
}

/** Constant-time: a candidate of another length is compared as the key with itself, so the time tells nothing of the key's length either. */
function sameKey(candidate: string, want: Buffer): boolean {
  const got = Buffer.from(candidate.trim());
  const sameLength = got.length === want.length;
  return timingSafeEqual(sameLength ? got : want, want) && sameLength;
}

/**
 * True when the request carries the local key in `x-claude-router-key`,
 * `authorization: Bearer <key>` or `x-api-key`. Constant-time comparison.
 */
export function checkClientKey(head: ClientHead, key: string): boolean {
  const want = keyBytes(key);
  if (head.routerKey !== undefined && sameKey(head.routerKey, want)) return true;
  const auth = head.authorization;
  if (auth !== undefined && BEARER.test(auth) && sameKey(auth.replace(BEARER, ''), want)) return true;
  return head.apiKey !== undefined && sameKey(head.apiKey, want);
}

const BEARER = /^bearer\s+/i;

/** A new local client key, the one format both shells create (a CLI's key file, the extension's SecretStorage): `clr-` and 32 random bytes (base64url). */
export function newClientKey(): string {
  return `clr-${randomBytes(32).toString('base64url')}`;
}
