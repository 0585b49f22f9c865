/**
 * Credentials in VS Code's SecretStorage (the OS keyring), one secret per
 * account. Nothing here ever goes to settings or global state.
 */
import type * as vscode from 'vscode';
import type { CredentialStore, Credentials } from '../accounts/types';

/** The SecretStorage key of an account's credentials. */
export const credentialKey = (label: string) => `claudeRouter.account.${label}`;

export class SecretCredentialStore implements CredentialStore {
  constructor(
    private readonly secrets: vscode.SecretStorage,
    /** Labels of the accounts the extension knows (SecretStorage cannot list keys). */
    private readonly knownLabels: () => readonly string[],
  ) {}

  async get(label: string): Promise<Credentials | undefined> {
    const raw = await this.secrets.get(credentialKey(label));
    if (!raw) return undefined;
    try {
      const c = JSON.parse(raw) as Credentials;
      return typeof c.accessToken === 'string' ? c : undefined;
    } catch {
      return undefined;
    }
  }

  set(label: string, credentials: Credentials): Promise<void> {
    return Promise.resolve(this.secrets.store(credentialKey(label), JSON.stringify(credentials)));
  }

  delete(label: string): Promise<void> {
    return Promise.resolve(this.secrets.delete(credentialKey(label)));
  }

  async labels(): Promise<string[]> {
    const out: string[] = [];
    for (const l of this.knownLabels()) if (await this.secrets.get(credentialKey(l))) out.push(l);
    return out;
  }
}
