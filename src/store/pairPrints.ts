/**
 * Prints of credential pairs (never the pairs): a short HMAC of a pair under the pool's key, so
 * Redis alone learns nothing of the tokens from it. The shared credential store
 * (sharedCredentials.ts) keeps the prints of the pairs it wrote to, or read from, the local copy —
 * a pair read back later (a slow read of a file since rewritten) is no news — and reads the prints
 * the pool has held from the credentials hash's `seen` field.
 */
import { createHmac } from 'node:crypto';
import type { Credentials } from '../accounts/types';
import type { StoreConnection } from './connection';
import type { StoreKey } from './encryption';
import { storeKeys } from './keys';
import { PAIR_PRINT_CHARS } from './scripts';

/** Prints of the local copy's past pairs kept per account: more than rotations in one slow file read. */
const LOCAL_PRINTS_MAX = 16;

export class PairPrints {
  /** Per account, the prints of the local copy's pairs, oldest first (at most {@link LOCAL_PRINTS_MAX}): the last is the local copy now. */
  private readonly local = new Map<string, string[]>();

  constructor(private readonly key: StoreKey) {}

  /** A pair's print: {@link PAIR_PRINT_CHARS} hex digits. */
  of(c: Credentials): string {
    return createHmac('sha256', this.key)
      .update(`${c.accessToken}\n${c.refreshToken ?? ''}\n${c.expiresAtMs ?? ''}`)
      .digest('hex')
      .slice(0, PAIR_PRINT_CHARS);
  }

  /** Remembers `creds` as the local copy of `label` now (written or read by the store). */
  noteLocal(label: string, creds: Credentials): void {
    const prints = this.local.get(label) ?? [];
    const print = this.of(creds);
    if (prints.at(-1) !== print) prints.push(print);
    if (prints.length > LOCAL_PRINTS_MAX) prints.shift();
    this.local.set(label, prints);
  }

  /** Whether `creds` is the local copy of `label` now. */
  isLocalNow(label: string, creds: Credentials): boolean {
    return this.local.get(label)?.at(-1) === this.of(creds);
  }

  /** Whether `creds` was ever a local copy of `label` this store knows of. */
  wasLocal(label: string, creds: Credentials): boolean {
    return this.local.get(label)?.includes(this.of(creds)) ?? false;
  }

  forget(label: string): void {
    this.local.delete(label);
  }

  /** Whether the pool has held `creds` for `label` (its print is in the credentials hash's `seen`). */
  async poolHeld(conn: StoreConnection, label: string, creds: Credentials): Promise<boolean> {
    const seen = (await conn.redis.hget(storeKeys.credentials(label), 'seen')) ?? '';
    const print = this.of(creds);
    for (let i = 0; i + PAIR_PRINT_CHARS <= seen.length; i += PAIR_PRINT_CHARS) if (seen.startsWith(print, i)) return true;
    return false;
  }
}
