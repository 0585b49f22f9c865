/**
 * What every API endpoint of the fake upstream checks first: the caller's credentials (an
 * account's `x-api-key` or OAuth bearer) and, for Messages-style endpoints, the body.
 */
import type { SimAccount } from '../account';
import { betaIncludes, type Exchange } from '../http';
import { sessionIdOf } from '../session';
import type { SimHost } from './host';

/** The OAuth beta flag subscription tokens need in `anthropic-beta`. */
export const OAUTH_BETA = 'oauth-2025-04-20';
/** Message of a 401 for an expired or superseded OAuth token. */
export const EXPIRED_TOKEN_MESSAGE = 'OAuth token has expired. Please obtain a new token or refresh your existing token.';

type AuthResult = { ok: true; account: SimAccount } | { ok: false };

/** A Messages-style request body after its required fields were checked. */
export interface MessagesBody {
  model: string;
  messages: unknown[];
  system?: unknown;
  tools?: unknown;
  stream?: unknown;
  metadata?: unknown;
}

/** A request header, repeated values joined with `, `. */
export function header(ex: Exchange, name: string): string | undefined {
  const v = ex.req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/** Headers every answer of an account carries. */
export function accountHeaders(a: SimAccount): Record<string, string> {
  return { 'anthropic-organization-id': a.organizationId };
}

/** Resolve the account from x-api-key or bearer; on failure the 401 is already sent. */
export function authenticate(host: SimHost, ex: Exchange, requireOauthBeta: boolean): AuthResult {
  const fail = (message: string, label: string | null = null, fault?: string): AuthResult => {
    if (ex.record) {
      ex.record.account = label;
      if (fault) ex.record.fault = fault;
    }
    ex.error(401, 'authentication_error', message);
    return { ok: false };
  };
  const authed = (label: string): AuthResult => {
    if (ex.record) ex.record.account = label;
    return { ok: true, account: host.acct(label) };
  };
  const apiKey = header(ex, 'x-api-key');
  if (apiKey !== undefined) {
    const c = host.tokens.checkApiKey(apiKey);
    if (!c.ok) return fail('invalid x-api-key');
    return authed(c.label);
  }
  const authz = header(ex, 'authorization');
  if (authz === undefined) return fail('x-api-key header is required');
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authz);
  if (!m) return fail('Invalid bearer token');
  if (requireOauthBeta && !betaIncludes(header(ex, 'anthropic-beta'), OAUTH_BETA)) {
    return fail('OAuth authentication is currently not supported.');
  }
  const c = host.tokens.checkAccess(m[1], host.now(), host.opts.enforceTokenExpiry === true);
  if (!c.ok) {
    if (c.reason === 'unknown') return fail('Invalid bearer token');
    return fail(EXPIRED_TOKEN_MESSAGE, c.label, c.byFault ? 'expire_token' : undefined);
  }
  return authed(c.label);
}

/** Parse and check a Messages-style body; on failure the 400 is already sent. */
export function parseMessagesBody(host: SimHost, ex: Exchange, buf: Buffer): MessagesBody | null {
  if (host.opts.requireVersionHeader !== false && header(ex, 'anthropic-version') === undefined) {
    ex.error(400, 'invalid_request_error', 'anthropic-version: header is required');
    return null;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(buf.toString('utf8'));
  } catch {
    ex.error(400, 'invalid_request_error', 'The request body is not valid JSON.');
    return null;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    ex.error(400, 'invalid_request_error', 'The request body must be a JSON object.');
    return null;
  }
  const b = parsed as Record<string, unknown>;
  if (ex.record) {
    ex.record.sessionId = sessionIdOf(ex.req.headers, b);
    if (typeof b.model === 'string') ex.record.model = b.model;
  }
  if (typeof b.model !== 'string' || b.model === '') {
    ex.error(400, 'invalid_request_error', 'model: Field required');
    return null;
  }
  if (!Array.isArray(b.messages)) {
    ex.error(400, 'invalid_request_error', 'messages: Field required');
    return null;
  }
  return b as unknown as MessagesBody;
}
