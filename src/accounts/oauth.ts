/**
 * Claude's OAuth token endpoint (docs/anthropic-api.md#oauth):
 * JSON body, public client id, refresh tokens rotate on every refresh.
 */
import { request } from 'undici';
import { ROUTER_USER_AGENT } from './userAgent';

/** Claude Code's public OAuth client id. */
export const OAUTH_CLIENT_ID = '9d1c250a-e61b-44d9-88ed-5944d1962f5e';

/** A successful token response, normalised. */
export interface TokenGrant {
  accessToken: string;
  /** Absent when the server did not rotate it: keep the old one. */
  refreshToken?: string;
  /** Epoch ms. */
  expiresAtMs?: number;
}

/**
 * Why a refresh failed. `invalid_grant` (refresh token dead or superseded) and
 * `rejected` (the endpoint refused in OAuth terms) need a person; `network`
 * covers every transient failure of the endpoint itself; `waiting_for_store`: in a shared pool
 * whose store is unreachable, another router owns this account's refresh (docs/shared-pool.md);
 * `store_unreadable`: the credential store could not be read (a corrupt or unreadable file), so
 * there was nothing to send or refresh — the message names the store's problem, never a token.
 */
export type RefreshFailure = 'invalid_grant' | 'no_refresh_token' | 'rejected' | 'network' | 'waiting_for_store' | 'store_unreadable';

export class RefreshError extends Error {
  constructor(
    readonly failure: RefreshFailure,
    message: string,
  ) {
    super(message);
    this.name = 'RefreshError';
  }
}

/** Calls the token endpoint. Throws `RefreshError`; the message never contains a token. */
export type TokenRefresher = (refreshToken: string) => Promise<TokenGrant>;

/**
 * Builds a refresher for a token URL.
 * @param tokenUrl e.g. `https://platform.claude.com/v1/oauth/token`
 * @param now clock, epoch ms
 * @param timeoutMs whole-request timeout
 */
export function oauthRefresher(tokenUrl: string, now: () => number = Date.now, timeoutMs = 30_000): TokenRefresher {
  return async (refreshToken) => {
    const { status, json } = await postToken(tokenUrl, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: OAUTH_CLIENT_ID }, timeoutMs);
    const oauthError = typeof json.error === 'string' ? json.error : undefined;
    if (oauthError === 'invalid_grant') throw new RefreshError('invalid_grant', 'token refresh failed: invalid_grant');
    // The endpoint refused this client's request in OAuth terms: a person must act.
    if (oauthError && status >= 400 && status < 500 && status !== 429) throw new RefreshError('rejected', `token refresh failed: ${oauthError}`);
    // Anything else — 5xx, 429, an HTML page, a 200 without a usable token — is the endpoint's
    // trouble, not the account's: transient, and the stored token is kept.
    if (status >= 400 || typeof json.access_token !== 'string' || json.access_token.length < 8) {
      throw new RefreshError('network', `token endpoint answered ${status >= 400 ? `HTTP ${status}` : 'without a usable token'}`);
    }
    const expiresIn = typeof json.expires_in === 'number' && json.expires_in > 0 ? json.expires_in : undefined;
    return {
      accessToken: json.access_token,
      refreshToken: typeof json.refresh_token === 'string' && json.refresh_token.length >= 8 ? json.refresh_token : undefined,
      expiresAtMs: expiresIn !== undefined ? now() + expiresIn * 1000 : undefined,
    };
  };
}

/**
 * POSTs `body` (JSON) to the token endpoint with the product's User-Agent: the one call behind a
 * refresh and a sign-in's code exchange. A body that is not a JSON object is read as `{}` (the
 * caller judges the answer by its status and fields).
 * @throws RefreshError `network` when the endpoint cannot be reached or its answer not read (the message never contains a token)
 */
export async function postToken(tokenUrl: string, body: Record<string, string>, timeoutMs = 30_000): Promise<{ status: number; json: Record<string, unknown> }> {
  let status: number;
  let text: string;
  try {
    const res = await request(tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'user-agent': ROUTER_USER_AGENT },
      body: JSON.stringify(body),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    status = res.statusCode;
    text = await res.body.text();
  } catch (err) {
    throw new RefreshError('network', `token endpoint unreachable: ${(err as Error).message}`);
  }
  let json: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object') json = parsed as Record<string, unknown>;
  } catch {
    /* judged by the caller */
  }
  return { status, json };
}
