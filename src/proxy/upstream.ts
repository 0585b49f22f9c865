/**
 * The upstream side: which client headers go to Anthropic, which credential
 * replaces the client's, and the undici dispatcher that keeps connections warm.
 * Forwarding rules: anthropic-wire.md §2.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Agent, type Dispatcher } from 'undici';
import type { AccountKind } from '../accounts/types';

/** The beta flag OAuth (subscription) tokens need on every request. */
export const OAUTH_BETA = 'oauth-2025-04-20';

/** Client headers never forwarded: hop-by-hop, our own, credentials, host, cookies. */
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
]);

/**
 * Headers for an upstream request: the client's minus DROP, plus the account's
 * credential. OAuth: `authorization: Bearer` and the OAuth beta appended to
 * `anthropic-beta`; API key: `x-api-key` and the OAuth beta removed.
 * `accept-encoding: identity` so the router can read usage from the bytes it
 * relays without decompressing them.
 */
export function upstreamHeaders(client: IncomingHttpHeaders, kind: AccountKind, token: string): Record<string, string> {
  const out: Record<string, string> = {};
  const hop = connectionOptions(client.connection);
  for (const name in client) {
    const value = client[name];
    if (value === undefined || DROP.has(name) || hop?.has(name)) continue;
    out[name] = typeof value === 'string' ? value : value.join(', ');
  }
  const betas = (out['anthropic-beta'] ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b.length > 0 && b !== OAUTH_BETA);
  if (kind === 'oauth') {
    out.authorization = `Bearer ${token}`;
    betas.push(OAUTH_BETA);
  } else {
    out['x-api-key'] = token;
  }
  if (betas.length > 0) out['anthropic-beta'] = betas.join(',');
  else delete out['anthropic-beta'];
  out['accept-encoding'] = 'identity';
  return out;
}

/** Headers a client named in `Connection` (hop-by-hop too, RFC 9110 §7.6.1); undefined for the usual `keep-alive`/`close`. */
function connectionOptions(connection: string | undefined): Set<string> | undefined {
  if (connection === undefined || connection === 'keep-alive' || connection === 'close') return undefined;
  return new Set(connection.toLowerCase().split(',').map((h) => h.trim()));
}

/**
 * Response headers never relayed to the client: hop-by-hop ones, the length (Node frames the
 * answer, we set it), and this router's own headers (a router behind another names itself).
 */
const DROP_RESPONSE = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'proxy-connection',
  'upgrade',
  'trailer',
  'te',
  'content-length',
  'x-claude-router-account',
  'x-claude-router-request-id',
]);

/**
 * The head of the client's response as a flat `[name, value, …]` list — the
 * form `res.writeHead` takes without building a header object: the upstream's
 * headers minus hop-by-hop ones and `content-length`, then `extra` (pairs).
 */
export function clientHeaderList(upstream: Record<string, string | string[] | undefined>, extra: readonly string[]): (string | string[])[] {
  const out: (string | string[])[] = [];
  for (const name in upstream) {
    const value = upstream[name];
    if (value === undefined || DROP_RESPONSE.has(name)) continue;
    out.push(name, value);
  }
  for (const v of extra) out.push(v);
  return out;
}

/**
 * One keep-alive agent for all upstream traffic. Timeouts (ms): the head of a
 * response may take long (a slow first byte is normal for big prompts), but
 * an idle body for 5 minutes is a dead stream.
 */
export function createUpstreamAgent(): Dispatcher {
  return new Agent({
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
    headersTimeout: 600_000,
    bodyTimeout: 300_000,
    connections: 256,
    pipelining: 1,
  });
}
