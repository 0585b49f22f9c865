/**
 * Redis is untrusted input (docs/security.md#the-shared-store): every value and notification the
 * routers of a pool share is signed with a MAC key derived from the pool's key (the one every
 * router holds in `store.key`), over the value's key name, the sending router's id and the value.
 * A value that does not verify — unsigned (an older router), altered, moved to another key, or
 * claiming another sender — is ignored.
 *
 * Signed form: `s1.<sender id>.<tag base64url>.<JSON>` (the JSON is the rest of the text, so it
 * is verified as written, never re-serialised).
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { StoreKey } from './encryption';

/** The MAC key of a pool: 32 bytes, derived from its store key (never the store key itself). */
export type MacKey = Buffer;

const FORM = 's1';
/** The HKDF label that separates the MAC key from the sealing key (the same store key). */
const MAC_INFO = 'claude-router shared-state mac v1';
const SENDER = /^[0-9a-z:-]{1,64}$/;

/** The pool's MAC key (HKDF-SHA256 of the store key, its own label). */
export function macKeyOf(key: StoreKey): MacKey {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), MAC_INFO, 32));
}

function tag(mac: MacKey, name: string, sender: string, json: string): Buffer {
  return createHmac('sha256', mac).update(name).update('\0').update(sender).update('\0').update(json).digest();
}

/**
 * `json` signed for the key (or channel) `name`, sent by `sender` (a router id: lower-case hex,
 * letters, `:` or `-`, at most 64 characters).
 */
export function signValue(mac: MacKey, name: string, sender: string, json: string): string {
  return `${FORM}.${sender}.${tag(mac, name, sender, json).toString('base64url')}.${json}`;
}

/** What {@link verifyValue} found: the sender and the JSON text, or why the text was refused. */
export type Verified = { ok: true; sender: string; json: string } | { ok: false; why: 'unsigned' | 'not authentic' };

/** Whether `text`, read from key (or channel) `name`, was signed by a holder of the pool's key. Never throws. */
export function verifyValue(mac: MacKey, name: string, text: string): Verified {
  if (!text.startsWith(`${FORM}.`)) return { ok: false, why: 'unsigned' };
  const a = FORM.length + 1;
  const b = text.indexOf('.', a);
  const c = b < 0 ? -1 : text.indexOf('.', b + 1);
  if (c < 0) return { ok: false, why: 'not authentic' };
  const sender = text.slice(a, b);
  const given = Buffer.from(text.slice(b + 1, c), 'base64url');
  const json = text.slice(c + 1);
  if (!SENDER.test(sender) || given.length !== 32) return { ok: false, why: 'not authentic' };
  if (!timingSafeEqual(given, tag(mac, name, sender, json))) return { ok: false, why: 'not authentic' };
  return { ok: true, sender, json };
}
