/**
 * The `state-store` setting: a `redis://` or `rediss://` (TLS) URL, its password from the URL or a
 * file. What may be shown of it (logs, `/status`, errors) never carries the password.
 */
import { readFileSync } from 'node:fs';
import { storeUrlProblem } from '../config/storeUrl';

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
