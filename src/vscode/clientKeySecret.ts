/**
 * The extension's local client key in SecretStorage (one per profile: every window of it shares
 * the key, and a rotation in one reaches the others through `secrets.onDidChange`). The key's
 * format is the proxy's (`newClientKey`, src/proxy/http/guard.ts), the same as a CLI's key file.
 */
import type * as vscode from 'vscode';
import { newClientKey } from '../proxy/http/guard';

/** The SecretStorage key that holds the client key. */
export const CLIENT_KEY_SECRET = 'claudeRouter.clientKey';

/** Whether a stored key is usable (a key shorter than 16 characters is replaced). */
export function usableClientKey(key: string | undefined): key is string {
  return !!key && key.length >= 16;
}

/** The stored key, or a new one stored first. */
export async function loadOrCreateClientKey(secrets: vscode.SecretStorage): Promise<string> {
  const existing = await secrets.get(CLIENT_KEY_SECRET);
  if (usableClientKey(existing)) return existing;
  const key = newClientKey();
  await secrets.store(CLIENT_KEY_SECRET, key);
  return key;
}

/** Stores a new key; @returns what is stored then (another window may have rotated at the same moment). */
export async function rotateStoredClientKey(secrets: vscode.SecretStorage): Promise<string | undefined> {
  await secrets.store(CLIENT_KEY_SECRET, newClientKey());
  return secrets.get(CLIENT_KEY_SECRET);
}
