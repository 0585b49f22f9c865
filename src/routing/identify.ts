/**
 * Stage 1 of planning, **identify**: the request's sticky key (the key session affinity binds
 * to an account) and the only place a raw key exists. Every later stage, the decision record,
 * `/status`, the saved state, the logs and the views see only its hash.
 *
 * The key, in precedence order (docs/claude-code-client.md#session-identity):
 *  1. `x-claude-code-session-id` (source `header`, kind `session`);
 *  2. the session id in `metadata.user_id` (source `metadata`, kind `session`);
 *  3. when `session-fingerprint` is on (the default) and the client sent no id: a hash of the
 *     parts of a request that stay the same across a conversation — system prompt, tool names
 *     and first message — (source
 *     `fingerprint`, kind `conversation`); computed only then, and over at most
 *     FINGERPRINT_PART_CHARS characters of each part, never the whole body;
 *  4. otherwise none (source `none`, kind `none`, no hash): the request gets no affinity.
 *
 * The hash is the first 16 lowercase hex digits of SHA-256 of the key (64 bits: collisions
 * are negligible at the affinity store's 5 000 sessions). One id has one hash whichever of
 * the header or the metadata carried it.
 */
import { hash } from 'node:crypto';

/** Where the sticky key came from. */
export type StickyKeySource = 'header' | 'metadata' | 'fingerprint' | 'none';

/**
 * What the key identifies: `session` — an id the client declared (header or metadata), one
 * Claude Code session; `conversation` — a fingerprint of the conversation's opening, for a
 * client that declares no id (two conversations that open identically share it); `none` — no key.
 */
export type StickyKind = 'session' | 'conversation' | 'none';

/** The outcome of identify: the key's hash, never the key. */
export interface StickyIdentity {
  /** First 16 lowercase hex digits of SHA-256 of the key; null when there is no key. */
  keyHash: string | null;
  source: StickyKeySource;
  kind: StickyKind;
}

export interface IdentifyInput {
  /** The session id of the `x-claude-code-session-id` header, already cleaned, or null. */
  headerId: string | null;
  /** The session id of `metadata.user_id`, or null (not looked at when there is a header id). */
  metadataId: string | null;
  /** The parsed request body, or undefined when it was not parsed (only read for a fingerprint). */
  body: unknown;
  /** `session-fingerprint`: fingerprint a request that carries no id. */
  fingerprint: boolean;
}

/** No key: no affinity. */
export const NO_STICKY_KEY: Readonly<StickyIdentity> = Object.freeze({ keyHash: null, source: 'none', kind: 'none' });

/** Most characters of each stable-head part (system prompt, tool names, first message) that the fingerprint reads. */
export const FINGERPRINT_PART_CHARS = 8192;

/** Deepest nesting the fingerprint walks into (a hostile body can nest thousands of levels). */
const MAX_DEPTH = 32;

/** A key hash: 16 lowercase hex digits. */
const KEY_HASH = /^[0-9a-f]{16}$/;

/** First 16 lowercase hex digits of SHA-256 of `key` (UTF-8). One-shot `hash` (Node ≥ 20.12): a third of `createHash`'s cost for a short key. */
export function stickyKeyHash(key: string): string {
  return hash('sha256', key, 'hex').slice(0, 16);
}

/** Whether `value` already has a key hash's shape (16 lowercase hex digits). */
export function isStickyKeyHash(value: string): boolean {
  return KEY_HASH.test(value);
}

/** `value` when it is already a key hash, else its hash: a raw session id from an older file or record. */
export function toStickyKeyHash(value: string): string {
  return isStickyKeyHash(value) ? value : stickyKeyHash(value);
}

/** Declared session ids remembered with their identity; past this many the memo starts over (a few hundred sessions is a busy pool). */
const MEMO_LIMIT = 1024;
/** Identities of recent declared ids, by source: a session sends many requests, each would hash its id again (docs/performance.md). */
const memo = { header: new Map<string, Readonly<StickyIdentity>>(), metadata: new Map<string, Readonly<StickyIdentity>>() };

/** The identity of a declared session id: one frozen object per id and source while it is remembered. */
function declared(id: string, source: 'header' | 'metadata'): Readonly<StickyIdentity> {
  const ids = memo[source];
  let found = ids.get(id);
  if (found === undefined) {
    if (ids.size >= MEMO_LIMIT) ids.clear();
    ids.set(id, (found = Object.freeze({ keyHash: stickyKeyHash(id), source, kind: 'session' as const })));
  }
  return found;
}

/** The request's sticky key, hashed. Never throws. The result may be shared between requests: never modify it. */
export function identify(input: IdentifyInput): Readonly<StickyIdentity> {
  if (input.headerId !== null) return declared(input.headerId, 'header');
  if (input.metadataId !== null) return declared(input.metadataId, 'metadata');
  if (!input.fingerprint) return NO_STICKY_KEY;
  const head = stableHead(input.body);
  return head === null ? NO_STICKY_KEY : { keyHash: stickyKeyHash(head), source: 'fingerprint', kind: 'conversation' };
}

/**
 * The text the fingerprint hashes: the system prompt, the tool names and the first message,
 * each cut at FINGERPRINT_PART_CHARS characters, with `cache_control` markers left out (clients
 * move them as the conversation grows). Only the first message: a conversation's first request
 * has no second one (the second is the first answer), so a key over two would change between
 * its first and second request. Null when the body has none of the three.
 */
function stableHead(body: unknown): string | null {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return null;
  const b = body as Record<string, unknown>;
  const system = new BoundedText();
  if (b.system !== undefined) system.value(b.system, 0);
  const tools = new BoundedText();
  if (Array.isArray(b.tools)) for (const t of b.tools as unknown[]) tools.value(t && typeof t === 'object' ? (t as Record<string, unknown>).name : undefined, 0);
  const first = new BoundedText();
  if (Array.isArray(b.messages) && b.messages.length > 0) first.value(b.messages[0], 0);
  if (system.text === '' && tools.text === '' && first.text === '') return null;
  return `fingerprint\u0000${system.text}\u0000${tools.text}\u0000${first.text}`;
}

/** A JSON value written as text until FINGERPRINT_PART_CHARS characters: strings length-prefixed, so distinct values give distinct text. */
class BoundedText {
  text = '';

  value(v: unknown, depth: number): void {
    if (this.text.length >= FINGERPRINT_PART_CHARS || depth > MAX_DEPTH) return;
    if (typeof v === 'string') this.add(`${v.length}:${v}`);
    else if (v === null || typeof v === 'number' || typeof v === 'boolean') this.add(`${String(v)};`);
    else if (Array.isArray(v)) {
      this.add('[');
      for (const item of v as unknown[]) {
        this.value(item, depth + 1);
        if (this.text.length >= FINGERPRINT_PART_CHARS) break;
      }
      this.add(']');
    } else if (typeof v === 'object') {
      this.add('{');
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
        if (k === 'cache_control' || item === undefined) continue;
        this.add(`${k.length}:${k}`);
        this.value(item, depth + 1);
        if (this.text.length >= FINGERPRINT_PART_CHARS) break;
      }
      this.add('}');
    }
  }

  private add(s: string): void {
    const room = FINGERPRINT_PART_CHARS - this.text.length;
    if (room > 0) this.text += s.length <= room ? s : s.slice(0, room);
  }
}
