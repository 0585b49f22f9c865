/** The check of the `state-store` setting's URL, shared by the config schema and the store (src/store/storeUrl.ts). */

/**
 * Why `url` cannot be a state store, or undefined when it can (the check behind the config schema).
 * The message never quotes the URL (it may hold a password).
 */
export function storeUrlProblem(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379/0';
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') return 'must be a redis:// or rediss:// URL (rediss:// for TLS)';
  if (!u.hostname) return 'must name a host, e.g. redis://127.0.0.1:6379/0';
  const db = u.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d{1,2}$/.test(db)) return 'its path must be a database number (0-99), e.g. redis://127.0.0.1:6379/0';
  if (u.search || u.hash) return 'must not carry a query or fragment';
  return undefined;
}
