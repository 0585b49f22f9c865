/**
 * Kept apart from the file store so the extension, which keeps real tokens in SecretStorage,
 * never loads the file lock library (it hooks process signals and patches `fs` in the shared
 * extension host).
 */
import type { CredentialStore, Credentials } from './types';

/** A credential store held in memory (tests, the demo). */
export class MemoryCredentialStore implements CredentialStore {
  private readonly map = new Map<string, Credentials>();
  async get(label: string) {
    const c = this.map.get(label);
    return c ? { ...c } : undefined;
  }
  async set(label: string, credentials: Credentials) {
    this.map.set(label, { ...credentials });
  }
  async delete(label: string) {
    this.map.delete(label);
  }
  async labels() {
    return [...this.map.keys()];
  }
}
