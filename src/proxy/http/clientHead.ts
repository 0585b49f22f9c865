/**
 * A client's request head, read in one pass over node:http's raw header list
 * (`req.rawHeaders`: `[name, value, …]` as sent) instead of `req.headers`, a
 * dictionary-mode object that is slow to walk (docs/performance.md).
 * A repeated single-value header counts by its first line,
 * as node keeps it — except the local-key headers, which node joined (so a
 * repeated key never matched) and whose first line counts here. Forwarding
 * rules: docs/anthropic-api.md#forwarding.
 */

/** Client headers never forwarded: hop-by-hop, our own, credentials, host, cookies, the body framing. */
const DROP = new Set([
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'cookie',
  'authorization',
  'x-api-key',
  'x-claude-router-key',
  'accept-encoding',
  'expect',
  // Nothing about the client's machine goes upstream.
  'referer',
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-real-ip',
  'via',
  // Rebuilt from `betas` with the account's credential.
  'anthropic-beta',
]);

/**
 * Headers of which only the first line counts (node:http discards later ones the same way);
 * every other repeated header is a list and is forwarded line by line (RFC 9110 §5.3).
 */
const FIRST_ONLY = new Set(['content-type', 'user-agent', 'from', 'if-modified-since', 'if-unmodified-since', 'max-forwards', 'origin', 'x-claude-code-session-id']);

/** What the router reads from a client's request head. Single values are the first occurrence. */
export interface ClientHead {
  host: string | undefined;
  /** Present at all: a browser page is calling. */
  origin: string | undefined;
  routerKey: string | undefined;
  authorization: string | undefined;
  apiKey: string | undefined;
  contentLength: string | undefined;
  /** Every `Expect` line, joined with `, `. */
  expect: string | undefined;
  /** `x-claude-code-session-id`, raw. */
  sessionId: string | undefined;
  /**
   * Claude Code's gateway hint headers, raw, first line each (forwarded as they are; read by
   * src/routing/requestClass.ts, observed values in docs/claude-code-client.md#request-classes):
   * `x-claude-code-request-class`, `x-claude-code-prompt-id`, `x-claude-code-agent-id`,
   * `x-claude-code-context-compacted`.
   */
  requestClass: string | undefined;
  promptId: string | undefined;
  agentId: string | undefined;
  contextCompacted: string | undefined;
  /**
   * The headers to forward upstream, as a flat `[name, value, …]` list with lower-case names,
   * in the client's order, repeated list headers as separate lines (RFC 9110 §5.3: the same as
   * one comma-joined line), {@link FIRST_ONLY} ones once: everything but {@link DROP} and the
   * headers the client's `Connection` names (hop-by-hop too, RFC 9110 §7.6.1).
   */
  forward: string[];
  /** Every `anthropic-beta` entry of every `anthropic-beta` line, trimmed, blanks dropped (none when `Connection` names it). */
  betas: string[];
}

/** Reads a raw header list. Never throws; names are matched in any case. */
export function readClientHead(raw: readonly string[]): ClientHead {
  const head: ClientHead = {
    host: undefined,
    origin: undefined,
    routerKey: undefined,
    authorization: undefined,
    apiKey: undefined,
    contentLength: undefined,
    expect: undefined,
    sessionId: undefined,
    requestClass: undefined,
    promptId: undefined,
    agentId: undefined,
    contextCompacted: undefined,
    forward: [],
    betas: [],
  };
  let connection: string | undefined;
  let seen: Set<string> | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    const value = raw[i + 1];
    switch (name) {
      case 'host':
        head.host ??= value;
        continue;
      case 'origin':
        head.origin ??= value;
        break; // forwarded (a browser request is refused before it is forwarded anyway)
      case 'x-claude-router-key':
        head.routerKey ??= value;
        continue;
      case 'authorization':
        head.authorization ??= value;
        continue;
      case 'x-api-key':
        head.apiKey ??= value;
        continue;
      case 'content-length':
        head.contentLength ??= value;
        continue;
      case 'expect':
        head.expect = head.expect === undefined ? value : `${head.expect}, ${value}`;
        continue;
      case 'x-claude-code-session-id':
        head.sessionId ??= value;
        break;
      case 'x-claude-code-request-class':
      case 'x-claude-code-prompt-id':
      case 'x-claude-code-agent-id':
      case 'x-claude-code-context-compacted':
        readHint(head, name, value);
        break; // forwarded as they are
      case 'connection':
        connection = connection === undefined ? value : `${connection},${value}`;
        continue;
      case 'anthropic-beta':
        for (const b of value.split(',')) {
          const t = b.trim();
          if (t) head.betas.push(t);
        }
        continue;
      default:
        break;
    }
    if (DROP.has(name)) continue;
    if (FIRST_ONLY.has(name)) {
      seen ??= new Set();
      if (seen.has(name)) continue;
      seen.add(name);
    }
    head.forward.push(name, value);
  }
  const named = connectionOptions(connection);
  if (named) {
    head.forward = head.forward.filter((_, i, list) => !named.has(list[i - (i % 2)]));
    if (named.has('anthropic-beta')) head.betas = [];
  }
  return head;
}

/** Keeps the first line of one of Claude Code's hint headers (`name` lower case, one of the four). */
function readHint(head: ClientHead, name: string, value: string): void {
  if (name === 'x-claude-code-request-class') head.requestClass ??= value;
  else if (name === 'x-claude-code-prompt-id') head.promptId ??= value;
  else if (name === 'x-claude-code-agent-id') head.agentId ??= value;
  else head.contextCompacted ??= value;
}

/** Headers a client named in `Connection`; undefined for the usual `keep-alive`/`close`. */
function connectionOptions(connection: string | undefined): Set<string> | undefined {
  if (connection === undefined) return undefined;
  const lower = connection.toLowerCase();
  if (lower === 'keep-alive' || lower === 'close') return undefined; // nearly every request: no list to build
  const named = new Set(lower.split(',').map((h) => h.trim()));
  named.delete('keep-alive');
  named.delete('close');
  named.delete('');
  return named.size > 0 ? named : undefined;
}
