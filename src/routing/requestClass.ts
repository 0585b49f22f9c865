/**
 * What a request is, as Claude Code's gateway hint headers say it (switched on by
 * `CLAUDE_CODE_GATEWAY_HINT_HEADERS=1`, which every environment of the router sets), and the
 * affinity unit a request belongs to. Observed with Claude Code 2.1.328 through a logging
 * stand-in for the router (docs/claude-code-client.md#request-classes):
 *
 * - `x-claude-code-request-class`: `main` (a prompt's turn), `subagent` (a sub-agent's turn, same
 *   session id as its parent), `compaction` (the `/compact` summary request), `auxiliary`
 *   (e.g. `x-claude-1p-request-class: summary-extraction`); sent only with the flag.
 * - `x-claude-code-prompt-id`: the user prompt a request serves (a sub-agent's requests carry
 *   their parent prompt's id); sent only with the flag, not on compaction or auxiliary requests.
 * - `x-claude-code-agent-id`: on a sub-agent's requests, the same on each of its turns; sent
 *   with or without the flag.
 * - `x-claude-code-context-compacted`: on the first request after a compaction (value `manual`
 *   after `/compact`); only with the flag.
 *
 * The ids are kept only as hashes, hashed exactly like session ids (src/routing/identify.ts) and
 * remembered so that a repeated id is not hashed again. Pure apart from those memos.
 */
import { stickyKeyHash, type StickyKeySource } from './identify';

/** The request classes the router knows (each observed with 2.1.328); any other value, or none, reads as `main`. */
export const REQUEST_CLASSES = ['main', 'subagent', 'compaction', 'auxiliary'] as const;
/** A request's class (see {@link REQUEST_CLASSES}). */
export type RequestClass = (typeof REQUEST_CLASSES)[number];

/** The class named by an `x-claude-code-request-class` value (exact, lower case); a missing or unknown value is `main`. */
export function requestClassOf(value: string | undefined): RequestClass {
  return value === 'subagent' || value === 'compaction' || value === 'auxiliary' ? value : 'main';
}

/** A recorded class (any JSON value, or absent in older lines) as a {@link RequestClass}: unknown or absent is `main`. */
export function recordedRequestClass(value: unknown): RequestClass {
  return typeof value === 'string' ? requestClassOf(value) : 'main';
}

/**
 * Whether a class is not a conversation turn, so it never binds or unbinds an affinity unit:
 * `auxiliary`, and `compaction` (its answer replaces the conversation, whose next request writes a
 * new cache anyway). `main` and `subagent` are turns.
 */
export function isAuxiliaryClass(c: RequestClass): boolean {
  return c === 'auxiliary' || c === 'compaction';
}

/**
 * Which header or field gave a request's affinity unit its key. For now the unit is the session:
 * `x-claude-code-session-id`, `metadata.user_id` (the body's session id), `fingerprint` (a client
 * without an id) or `none` (no key, no affinity).
 */
export type UnitSource = 'x-claude-code-session-id' | 'metadata.user_id' | 'fingerprint' | 'none';

/** The unit source of a sticky key's source (`unknown`, from a version 1 record, reads as `none`). */
export function unitSourceOf(source: StickyKeySource | 'unknown'): UnitSource {
  switch (source) {
    case 'header':
      return 'x-claude-code-session-id';
    case 'metadata':
      return 'metadata.user_id';
    case 'fingerprint':
      return 'fingerprint';
    case 'none':
    case 'unknown':
      return 'none';
  }
}

/** Longest id accepted (as for session ids: longer values are not Claude Code's and are ignored). */
const MAX_ID = 200;
/** Ids remembered with their hash, per kind; past this many the memo starts over. */
const MEMO_LIMIT = 1024;
const memo = { prompt: new Map<string, string>(), agent: new Map<string, string>() };

/**
 * The hash of a prompt or agent id header's raw value (16 lowercase hex digits, as
 * {@link stickyKeyHash}), or null when absent or not an id (empty after trimming, over 200
 * characters, or holding a character outside printable ASCII). One SHA-256 per distinct id while
 * it is remembered.
 */
export function hintIdHash(value: string | undefined, kind: 'prompt' | 'agent'): string | null {
  if (value === undefined) return null;
  const ids = memo[kind];
  const found = ids.get(value);
  if (found !== undefined) return found;
  const id = value.trim();
  if (id.length === 0 || id.length > MAX_ID || !printable(id)) return null;
  if (ids.size >= MEMO_LIMIT) ids.clear();
  const h = stickyKeyHash(id);
  ids.set(value, h);
  return h;
}

/** Every character is printable ASCII without the space (0x21–0x7e), as session ids must be. */
function printable(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}
