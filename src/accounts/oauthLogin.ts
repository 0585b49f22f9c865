/**
 * "Sign in with Claude": OAuth 2 authorization code with PKCE (S256), the
 * manual copy-code flow Claude Code itself uses (docs/anthropic-api.md#oauth): the
 * browser shows `code#state`, the user pastes it back, we exchange it at the
 * token endpoint.
 */
import { createHash, randomBytes } from 'node:crypto';
import { OAUTH_CLIENT_ID, postToken, RefreshError } from './oauth';
import type { Credentials } from './types';

export const AUTHORIZE_URL = 'https://claude.ai/oauth/authorize';
export const MANUAL_REDIRECT_URI = 'https://platform.claude.com/oauth/code/callback';
export const OAUTH_SCOPES = 'org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload';

/** One login attempt's secrets (kept in memory until the code comes back). */
export interface PkceLogin {
  verifier: string;
  state: string;
  /** The URL to open in the browser. */
  url: string;
}

/** Starts a login: a random verifier (32 bytes, base64url), its S256 challenge and a separate random state. */
export function startPkceLogin(authorizeUrl = AUTHORIZE_URL): PkceLogin {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const q = new URLSearchParams({
    code: 'true',
    client_id: OAUTH_CLIENT_ID,
    response_type: 'code',
    redirect_uri: MANUAL_REDIRECT_URI,
    scope: OAUTH_SCOPES,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
  });
  return { verifier, state, url: `${authorizeUrl}?${q.toString()}` };
}

/**
 * Splits the pasted `code#state`. The state is required: it ties the paste to this login.
 * @throws Error when nothing or only part of the code is pasted (no `#state`), or the state does not
 * match this login (a paste from another attempt)
 */
export function parsePastedCode(pasted: string, login: PkceLogin): { code: string; state: string } {
  const [code, state] = pasted.trim().split('#');
  if (!code) throw new Error('nothing pasted: copy the whole code shown after signing in');
  if (!state) throw new Error('the code is incomplete: paste the whole code shown after signing in, including the part after "#"');
  if (state !== login.state) throw new Error('this code belongs to another sign-in attempt; start again');
  return { code, state };
}

/**
 * Exchanges an authorization code for tokens: a new grant, so `grantedAtMs` is `now()`.
 * @throws RefreshError (message never contains a token)
 */
export async function exchangeCode(tokenUrl: string, login: PkceLogin, pasted: string, now: () => number = Date.now): Promise<Credentials> {
  const { code, state } = parsePastedCode(pasted, login);
  const { status, json } = await postToken(tokenUrl, {
    grant_type: 'authorization_code',
    code,
    state,
    client_id: OAUTH_CLIENT_ID,
    redirect_uri: MANUAL_REDIRECT_URI,
    code_verifier: login.verifier,
  });
  if (status >= 400 || typeof json.access_token !== 'string') {
    throw new RefreshError('rejected', `sign-in failed: ${typeof json.error === 'string' ? json.error : `HTTP ${status}`}`);
  }
  return {
    accessToken: json.access_token,
    refreshToken: typeof json.refresh_token === 'string' ? json.refresh_token : undefined,
    expiresAtMs: typeof json.expires_in === 'number' ? now() + json.expires_in * 1000 : undefined,
    grantedAtMs: now(),
  };
}
