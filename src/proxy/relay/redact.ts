/**
 * Redaction of an account's tokens from upstream bodies the router relays whole: a gateway (or
 * the API) that echoes request headers in an answer would otherwise hand the account's bearer
 * token to the client. Only bodies the router buffers anyway pass here — error answers and JSON
 * answers — and a body without a token costs one `Buffer.indexOf` per token, no copy.
 *
 * Event streams are not redacted: their content is the model's output for the client's own
 * prompt, which never contains the account's token (it travels in a header the router sets),
 * and an error before the first event is answered with the router's own text.
 */

/** What replaces a token: plain ASCII without quotes or backslashes, so a JSON string stays valid. */
export const REDACTED = '[redacted]';
const REDACTED_BYTES = Buffer.from(REDACTED);

/** Shorter strings are not treated as tokens (an empty or one-letter "token" would match everywhere). */
const MIN_TOKEN_LENGTH = 8;

/**
 * `body` with every occurrence of each token replaced by {@link REDACTED}.
 * @param body an answer body, already decoded (not compressed)
 * @param tokens the access and refresh tokens the attempt used or received; undefined entries are skipped
 * @returns `body` itself when it holds none of them, else a new Buffer
 */
export function redactTokens(body: Buffer, tokens: readonly (string | undefined)[]): Buffer {
  let out = body;
  for (const token of tokens) {
    if (token === undefined || token.length < MIN_TOKEN_LENGTH) continue;
    let at = out.indexOf(token);
    if (at === -1) continue;
    const needle = Buffer.from(token);
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
