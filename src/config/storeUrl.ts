/**
 * The `state-store` setting: a `redis://` or `rediss://` (TLS) URL, its password from the URL or a
 * file — checked for the config schema and the VS Code setting, parsed for the store's connection.
 * What may be shown of it (logs, `/status`, errors) never carries the password.
 */
import { readFileSync } from 'node:fs';

/** Where the shared store is and how to log in; `password` is a secret. */
export interface StoreTarget {
  host: string;
  port: number;
  /** Redis database number (the URL's path, default 0). */
  db: number;
  tls: boolean;
  username?: string;
  password?: string;
  /** The URL without user or password, for logs and `/status`: `redis://host:port/db`. */
  display: string;
}

/**
 * Parses a validated state-store URL; the password comes from `passwordFile` when given (its first
 * line), else from the URL.
 * @throws Error naming `state-store` or `state-store-password-file` (never quoting a secret)
 */
export function parseStoreUrl(url: string, passwordFile?: string): StoreTarget {
  const problem = storeUrlProblem(url);
  if (problem) throw new Error(`state-store: ${problem}`);
  const u = new URL(url);
  const tls = u.protocol === 'rediss:';
  const port = u.port ? Number(u.port) : 6379;
  const db = Number(u.pathname.replace(/^\//, '') || '0');
  let password = u.password ? decodeURIComponent(u.password) : undefined;
  if (passwordFile) {
    try {
      password = readFileSync(passwordFile, 'utf8').split(/\r?\n/)[0];
    } catch (err) {
      throw new Error(`state-store-password-file ${passwordFile} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { cause: err });
    }
    if (!password) throw new Error(`state-store-password-file ${passwordFile} is empty`);
  }
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  return {
    host,
    port,
    db,
    tls,
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password,
    display: `${tls ? 'rediss' : 'redis'}://${u.hostname}:${port}/${db}`,
  };
}

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
