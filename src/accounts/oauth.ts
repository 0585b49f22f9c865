/**
 * Claude's OAuth token endpoint (../shared/reference/anthropic-wire.md §5):
 * JSON body, public client id, refresh tokens rotate on every refresh.
 */
import { request } from 'undici';

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

/** Why a refresh failed. `invalid_grant` means the refresh token is dead or superseded. */
export type RefreshFailure = 'invalid_grant' | 'no_refresh_token' | 'rejected' | 'network';

export class RefreshError extends Error {
  constructor(readonly failure: RefreshFailure, message: string) {
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
    let status: number;
    let text: string;
    try {
      const res = await request(tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: OAUTH_CLIENT_ID }),
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
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      /* reported below by status */
    }
    if (status >= 400 || typeof json.access_token !== 'string') {
      const code = typeof json.error === 'string' ? json.error : `HTTP ${status}`;
      throw new RefreshError(code === 'invalid_grant' ? 'invalid_grant' : 'rejected', `token refresh failed: ${code}`);
    }
    const expiresIn = typeof json.expires_in === 'number' ? json.expires_in : undefined;
    return {
      accessToken: json.access_token,
      refreshToken: typeof json.refresh_token === 'string' ? json.refresh_token : undefined,
      expiresAtMs: expiresIn !== undefined ? now() + expiresIn * 1000 : undefined,
    };
  };
}
