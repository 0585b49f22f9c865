/**
 * Redaction of an account's tokens from upstream bodies the router relays: a gateway (or the API)
 * that echoes request headers in an answer would otherwise hand the account's bearer token to
 * the client. Bodies relayed whole — error answers and JSON answers — and every event of a
 * relayed stream pass here; a body without a token costs one `Buffer.indexOf` per token, no copy.
 * A stream is redacted event by event: the relay forwards whole events only (sse.ts), so a token
 * never straddles two of the buffers it scans.
 */

/** What replaces a token: plain ASCII without quotes or backslashes, so a JSON string stays valid. */
export const REDACTED = '[redacted]';
const REDACTED_BYTES = Buffer.from(REDACTED);

/** Shorter strings are not treated as tokens (an empty or one-letter "token" would match everywhere). */
const MIN_TOKEN_LENGTH = 8;

/** Tokens already encoded, by token: an account's pair is encoded once, not per answer or per event. */
const encoded = new Map<string, Buffer>();
/** Past this many tokens the cache starts over (a few accounts hold two each, plus refreshes). */
const MAX_ENCODED = 64;

/**
 * The tokens to look for, encoded (UTF-8), leaving out undefined ones and strings shorter than
 * {@link MIN_TOKEN_LENGTH}.
 * @param tokens the access and refresh tokens an attempt used or received
 */
export function tokenNeedles(tokens: readonly (string | undefined)[]): Buffer[] {
  const out: Buffer[] = [];
  for (const token of tokens) {
    if (token === undefined || token.length < MIN_TOKEN_LENGTH) continue;
    let needle = encoded.get(token);
    if (needle === undefined) {
      if (encoded.size >= MAX_ENCODED) encoded.clear();
      encoded.set(token, (needle = Buffer.from(token)));
    }
    out.push(needle);
  }
  return out;
}

/**
 * `body` with every occurrence of each needle replaced by {@link REDACTED}.
 * @param needles encoded tokens ({@link tokenNeedles})
 * @returns `body` itself when it holds none of them, else a new Buffer
 */
export function redactNeedles(body: Buffer, needles: readonly Buffer[]): Buffer {
  let out = body;
  for (const needle of needles) {
    let at = out.indexOf(needle);
    if (at === -1) continue;
    const parts: Buffer[] = [];
    let from = 0;
    while (at !== -1) {
      parts.push(out.subarray(from, at), REDACTED_BYTES);
      from = at + needle.length;
      at = out.indexOf(needle, from);
    }
    parts.push(out.subarray(from));
    out = Buffer.concat(parts);
  }
  return out;
}

/**
 * `body` with every occurrence of each token replaced by {@link REDACTED}.
 * @param body an answer body, already decoded (not compressed)
 * @param tokens the access and refresh tokens the attempt used or received; undefined entries are skipped
 * @returns `body` itself when it holds none of them, else a new Buffer
 */
export function redactTokens(body: Buffer, tokens: readonly (string | undefined)[]): Buffer {
  return redactNeedles(body, tokenNeedles(tokens));
}
