/**
 * The upstream side: which client headers go to Anthropic, which credential
 * replaces the client's, and the undici dispatcher that keeps connections warm.
 * Forwarding rules: docs/anthropic-api.md#forwarding.
 */
import { Agent, type Dispatcher } from 'undici';
import type { AccountKind } from '../../accounts/types';
import { parseRetryAfterMs } from '../../quota/time';

/** The beta flag OAuth (subscription) tokens need on every request. */
export const OAUTH_BETA = 'oauth-2025-04-20';

/** What of the client's head goes upstream (http/clientHead.ts reads it): a flat `[name, value, …]` list and the `anthropic-beta` entries. */
export interface ForwardedHead {
  readonly forward: readonly string[];
  readonly betas: readonly string[];
}

/**
 * Headers for an upstream request, as the flat `[name, value, …]` list undici takes: the
 * client's forwarded headers (`ClientHead.forward`, http/clientHead.ts) plus the account's credential.
 * OAuth: `authorization: Bearer` and the OAuth beta appended to the client's `anthropic-beta`
 * entries; API key: `x-api-key` and the OAuth beta removed. `accept-encoding: identity` so the
 * router can read usage from the bytes it relays without decompressing them (an answer that
 * comes compressed anyway is decoded on its way in: bodyDecoder.ts).
 */
export function upstreamHeaders(client: ForwardedHead, kind: AccountKind, token: string): string[] {
  const out = client.forward.slice();
  const betas = client.betas.filter((b) => b !== OAUTH_BETA);
  if (kind === 'oauth') {
    out.push('authorization', `Bearer ${token}`);
    betas.push(OAUTH_BETA);
  } else {
    out.push('x-api-key', token);
  }
  if (betas.length > 0) out.push('anthropic-beta', betas.join(','));
  out.push('accept-encoding', 'identity');
  return out;
}

/**
 * Response headers never relayed to the client: hop-by-hop ones, the length (Node frames the
 * answer, we set it), cookies (the client's `Cookie` never goes upstream, and one account's
 * upstream cookies mean nothing to requests another account serves), and this router's own
 * headers (a router behind another names itself).
 */
const DROP_RESPONSE = new Set([
  'set-cookie',
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
 * headers minus hop-by-hop ones and `content-length` (and `retry-after` made a
 * plain delay: {@link clientRetryAfter}), then `extra` (pairs).
 */
export function clientHeaderList(upstream: Record<string, string | string[] | undefined>, extra: readonly string[]): (string | string[])[] {
  const out: (string | string[])[] = [];
  for (const name in upstream) {
    const value = upstream[name];
    if (value === undefined || DROP_RESPONSE.has(name)) continue;
    if (name === 'retry-after') {
      const seconds = clientRetryAfter(value);
      if (seconds !== undefined) out.push(name, seconds);
      continue;
    }
    out.push(name, value);
  }
  for (const v of extra) out.push(v);
  return out;
}

/** A plain `retry-after` in whole seconds: what Anthropic sends, relayed as it is. */
const WHOLE_SECONDS = /^\d{1,9}$/;

/**
 * The upstream's `retry-after` as the client gets it: whole seconds as they are; a negative
 * delay as `0`; a fraction or an HTTP-date as whole seconds from now (rounded up); undefined —
 * the header is dropped — for anything else (`soon-ish`), so a client never waits on garbage.
 * A repeated header counts by its first value.
 */
export function clientRetryAfter(value: string | string[]): string | undefined {
  const first = (Array.isArray(value) ? value[0] : value)?.trim();
  if (first === undefined) return undefined;
  if (WHOLE_SECONDS.test(first)) return first;
  const ms = parseRetryAfterMs(first, Date.now());
  return ms === undefined ? undefined : String(Math.ceil(ms / 1000));
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
