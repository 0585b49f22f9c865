/**
 * What the router needs to know about a client's request body — model,
 * session, stream flag and output ceiling — read with as little work as possible: the body is
 * forwarded byte for byte and can be hundreds of KB, so it is JSON-parsed at
 * most once, and not at all when the session header is present and the model
 * sits at the head of the body (as Claude Code and the SDKs serialise it).
 */
import { identify, type StickyIdentity } from '../../routing/identify';
import type { RequestBody } from './body';
import { sessionIdFromBody, sessionIdFromHeader } from './sessionKey';

export interface RequestInfo {
  model: string | null;
  /** The sticky key's hash and where it came from (the raw key never leaves `identify`). */
  sticky: StickyIdentity;
  /** The body's `stream` flag when it was read; null when the body was not parsed. */
  stream: boolean | null;
  /** The body's `max_tokens` (the output ceiling, tokens); null when absent or not found at the body's head or tail without a parse. */
  maxTokens: number | null;
}

/** The body was not valid JSON (only detected when it had to be parsed). */
export class MalformedBodyError extends Error {}

/**
 * `{"model":"<printable ASCII, no quote or backslash>"` at the head of the body. Only ASCII: the
 * head is decoded as latin1, so a multi-byte UTF-8 model name must take the parse path.
 */
const HEAD_MODEL = /^\s*\{\s*"model"\s*:\s*"([\x20\x21\x23-\x5b\x5d-\x7e]{1,200})"/;

/** Longest model name kept (the fast path reads at most as many). */
const MAX_MODEL_CHARS = 200;

/**
 * A `"max_tokens":<integer>` member. Inside a JSON string its quotes are escaped, so only a key
 * matches; the SDKs serialise it next to the model or among the last members.
 */
const MAX_TOKENS_MEMBER = /"max_tokens"\s*:\s*(\d{1,9})\s*[,}]/;

/** Bytes of the body's end searched for `max_tokens` when the body is not parsed. */
const TAIL_BYTES = 512;

/** `max_tokens` of an unparsed body: from its head (already decoded), else its last {@link TAIL_BYTES}; null when neither has it. */
function maxTokensOf(head: string, body: RequestBody): number | null {
  const m = MAX_TOKENS_MEMBER.exec(head) ?? MAX_TOKENS_MEMBER.exec(body.tail(TAIL_BYTES).toString('latin1'));
  return m ? positiveOrNull(Number(m[1])) : null;
}

function positiveOrNull(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : null;
}

/**
 * How many bytes of the body budget the parse of a body of `length` bytes stands for, besides the
 * body itself: its text (the chunks joined, then decoded) and the parsed tree live beside it
 * while it is parsed — about {@link PARSE_FACTOR} times the body. Capped so that body and parse
 * together fit an idle budget: any single body is still taken.
 * @param length the body's size, bytes
 * @param budgetLimit `routing.max-buffered-body-bytes`, bytes
 */
export function parseRoomFor(length: number, budgetLimit: number): number {
  return Math.max(0, Math.min(PARSE_FACTOR * length, budgetLimit - length));
}

/** The parse's temporary memory, as a multiple of the body's size (see {@link parseRoomFor}). */
export const PARSE_FACTOR = 2;

/**
 * What the request's head and the first bytes of its body tell without parsing the body: with a
 * session header and the model at the body's head (Claude Code), or with no body at all.
 * @param sessionHeader the client's `x-claude-code-session-id` header (first line), if any
 * @param body the raw body
 * @param fingerprint `session-fingerprint`: a request without a session id gets a fingerprint key
 * @returns undefined when the body must be parsed ({@link parseRequest})
 */
export function inspectHead(sessionHeader: string | undefined, body: RequestBody, fingerprint: boolean): RequestInfo | undefined {
  const headerSession = sessionIdFromHeader(sessionHeader);
  if (headerSession !== null && body.length > 0) {
    const head = body.head(256).toString('latin1');
    const m = HEAD_MODEL.exec(head);
    if (m) return { model: m[1], sticky: identify({ headerId: headerSession, metadataId: null, body: undefined, fingerprint }), stream: null, maxTokens: maxTokensOf(head, body) };
  }
  if (body.length === 0) return { model: null, sticky: identify({ headerId: headerSession, metadataId: null, body: undefined, fingerprint }), stream: null, maxTokens: null };
  return undefined;
}

/**
 * The request's facts from its body parsed whole (the text and the tree take about
 * {@link PARSE_FACTOR} times the body besides it: count them first, {@link parseRoomFor}).
 * @param sessionHeader the client's `x-claude-code-session-id` header (first line), if any
 * @param body the raw body, not empty
 * @param fingerprint `session-fingerprint`: a request without a session id gets a fingerprint key
 * @throws MalformedBodyError when the body is not a JSON object
 */
export function parseRequest(sessionHeader: string | undefined, body: RequestBody, fingerprint: boolean): RequestInfo {
  const headerSession = sessionIdFromHeader(sessionHeader);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.text());
  } catch {
    throw new MalformedBodyError('request body is not valid JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new MalformedBodyError('request body must be a JSON object');
  const obj = parsed as Record<string, unknown>;
  return {
    // Recorded in every decision: a model name is never this long, a hostile one could be.
    model: typeof obj.model === 'string' ? obj.model.slice(0, MAX_MODEL_CHARS) : null,
    sticky: identify({ headerId: headerSession, metadataId: headerSession === null ? sessionIdFromBody(obj) : null, body: obj, fingerprint }),
    stream: typeof obj.stream === 'boolean' ? obj.stream : null,
    maxTokens: positiveOrNull(obj.max_tokens),
  };
}

/**
 * {@link inspectHead}, else {@link parseRequest} (a body parsed outside any memory budget: tests, tools).
 * @throws MalformedBodyError when the body had to be parsed and is not a JSON object
 */
export function inspectRequest(sessionHeader: string | undefined, body: RequestBody, fingerprint: boolean): RequestInfo {
  return inspectHead(sessionHeader, body, fingerprint) ?? parseRequest(sessionHeader, body, fingerprint);
}
