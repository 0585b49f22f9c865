/** `POST /v1/oauth/token`: the refresh-token and authorization-code grants (form or JSON body). */
import type { Exchange } from '../http';
import type { SimHost } from './host';
import { header } from './request';

/** Answers one token request (`buf` is the raw form or JSON body); 400 with an OAuth error code when it fails. */
export async function token(host: SimHost, ex: Exchange, buf: Buffer): Promise<void> {
  if (host.opts.tokenLatencyMs) await host.sleep(host.opts.tokenLatencyMs);
  if (ex.gone) return;
  const text = buf.toString('utf8');
  let p: Record<string, unknown> = {};
  try {
    const ct = header(ex, 'content-type') ?? '';
    if (ct.includes('application/x-www-form-urlencoded')) p = Object.fromEntries(new URLSearchParams(text));
    else {
      const j: unknown = JSON.parse(text);
      if (j && typeof j === 'object' && !Array.isArray(j)) p = j as Record<string, unknown>;
    }
  } catch {
    return ex.json(400, { error: 'invalid_request', error_description: 'Invalid request body' });
  }
  const now = host.now();
  if (p.grant_type === 'refresh_token') {
    const r = typeof p.refresh_token === 'string' ? host.tokens.refreshGrant(p.refresh_token, now) : null;
    if (!r) return ex.json(400, { error: 'invalid_grant', error_description: 'Refresh token not found or invalid' });
    if (ex.record) ex.record.account = r.label;
    return ex.json(200, r.grant);
  }
  if (p.grant_type === 'authorization_code') {
    if (typeof p.code_verifier !== 'string' || p.code_verifier === '') {
      return ex.json(400, { error: 'invalid_request', error_description: 'Missing code_verifier' });
    }
    const r = typeof p.code === 'string' ? host.tokens.codeGrant(p.code, now) : null;
    if (!r) return ex.json(400, { error: 'invalid_grant', error_description: 'Invalid authorization code' });
    if (ex.record) ex.record.account = r.label;
    return ex.json(200, r.grant);
  }
  return ex.json(400, { error: 'unsupported_grant_type', error_description: `Unsupported grant_type ${JSON.stringify(p.grant_type)}` });
}
