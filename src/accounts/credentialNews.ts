/**
 * Whether a change of this machine's copy of an account's credentials (the CLI's
 * `credentials.json`, VS Code's SecretStorage) is news — a pair a person stored: a sign-in,
 * `claude-router accounts login` — rather than the router's own write of a pair it already holds
 * (every token refresh rewrites the copy). Only news makes the router re-read the pair and lift
 * a needs-sign-in flag; treating its own writes as news would hide a refused pair
 * (`TokenManager.holds` is false while a re-read is pending).
 */
import type { TokenManager } from './tokenManager';
import type { CredentialStore } from './types';

/** The shared pool's side of it (src/store/sharedCredentials.ts `localChanged`): true when the copy holds a pair the pool has not held, which it then takes. */
export interface PoolNews {
  localChanged(label: string): Promise<boolean>;
}

/**
 * @param local this machine's copy
 * @param pool the shared pool, when one is configured: it decides first (a pair it has held is no news)
 * @returns true when the copy of `label` holds a pair the router does not (a read error counts as news: re-reading is safe)
 */
export async function credentialNews(label: string, local: CredentialStore, tokens: TokenManager, pool?: PoolNews): Promise<boolean> {
  if (pool && !(await pool.localChanged(label).catch(() => true))) return false;
  const held = tokens.ready(label);
  return held === undefined || held.accessToken !== (await local.get(label).catch(() => undefined))?.accessToken;
}
