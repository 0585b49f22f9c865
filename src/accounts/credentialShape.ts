/** Telling an API key from OAuth tokens by their prefixes (docs/anthropic-api.md, "Credential shapes"). */

/**
 * What a secret's prefix says it is (docs/anthropic-api.md, "Credential shapes"): `api_key` for
 * `sk-ant-api…`, `oauth` for an OAuth access token `sk-ant-oat…`, `refresh` for an OAuth refresh
 * token `sk-ant-ort…`, undefined for anything else (a test token, a future shape).
 */
export function credentialShape(secret: string): 'api_key' | 'oauth' | 'refresh' | undefined {
  const s = secret.trim();
  if (s.startsWith('sk-ant-api')) return 'api_key';
  if (s.startsWith('sk-ant-oat')) return 'oauth';
  if (s.startsWith('sk-ant-ort')) return 'refresh';
  return undefined;
}
