/**
 * Seeding the credential store from a config file. The YAML copy of a token
 * only seeds: it is written to the store when the store has nothing for that
 * label, or when the YAML token itself changed since it was seeded. A token
 * the router rotated since is never overwritten by a stale YAML copy.
 */
import { createHash } from 'node:crypto';
import type { CredentialStore, Credentials } from './types';

/** A config file's credential for one account. */
export interface SeedCredential {
  label: string;
  accessToken: string;
  refreshToken?: string;
  expiresAtMs?: number;
}

/** A stable fingerprint of the YAML copy (never stored in clear). */
export function seedFingerprint(c: SeedCredential): string {
  return createHash('sha256')
    .update(`${c.accessToken}\n${c.refreshToken ?? ''}`)
    .digest('hex')
    .slice(0, 32);
}

/** Writes seeds that are new or changed; returns the labels written. */
export async function seedCredentials(store: CredentialStore, seeds: readonly SeedCredential[]): Promise<string[]> {
  const written: string[] = [];
  for (const seed of seeds) {
    const fp = seedFingerprint(seed);
    const stored = await store.get(seed.label);
    if (stored && stored.seedFingerprint === fp) continue;
    const next: Credentials = {
      accessToken: seed.accessToken,
      refreshToken: seed.refreshToken,
      expiresAtMs: seed.expiresAtMs,
      seedFingerprint: fp,
    };
    await store.set(seed.label, next);
    written.push(seed.label);
  }
  return written;
}
