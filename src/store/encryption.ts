/**
 * Tokens go into the shared store only sealed with AES-256-GCM under a 32-byte key that every
 * machine of the user holds locally (a key file, or the extension's SecretStorage); someone with
 * access to Redis alone reads nothing. The additional data binds a sealed pair to its account, so
 * a blob cannot be moved to another account's key.
 *
 * Sealed form: `v1.<iv base64url>.<ciphertext base64url>.<tag base64url>`.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import * as path from 'node:path';

/** A store key: 32 bytes. */
export type StoreKey = Buffer;

const KEY_BYTES = 32;
const IV_BYTES = 12;

/**
 * Reads a key from its text form: 64 hex digits (what the key file holds), surrounding space ignored.
 * @throws Error naming `what` (never quoting the text) when it is not 64 hex digits
 */
export function keyFromText(text: string, what: string): StoreKey {
  const hex = text.trim();
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error(`${what} must hold a state-store key: 64 hex digits (32 bytes)`);
  return Buffer.from(hex, 'hex');
}

/** A new random key in its text form (64 hex digits). */
export function newKeyText(): string {
  return randomBytes(KEY_BYTES).toString('hex');
}

/** What {@link loadOrCreateKeyFile} found. */
export interface LoadedKey {
  key: StoreKey;
  /** The file did not exist and was created (mode 0600): the other machines need a copy of it. */
  created: boolean;
}

/**
 * The key in `file`, created (random, mode 0600, directory 0700) when it does not exist.
 * @throws Error naming `state-store-key-file` when the file cannot be read or holds no key
 */
export function loadOrCreateKeyFile(file: string): LoadedKey {
  try {
    return { key: keyFromText(readFileSync(file, 'utf8'), `state-store-key-file ${file}`), created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      if (err instanceof Error && err.message.startsWith('state-store-key-file')) throw err;
      throw new Error(`state-store-key-file ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { cause: err });
    }
  }
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const text = newKeyText();
  let fd: number;
  try {
    // wx: two routers starting at once never overwrite each other's new key.
    fd = openSync(file, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateKeyFile(file);
    throw new Error(`state-store-key-file ${file} cannot be created (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { cause: err });
  }
  try {
    writeSync(fd, `${text}\n`);
  } finally {
    closeSync(fd);
  }
  return { key: Buffer.from(text, 'hex'), created: true };
}

/** Seals `plaintext` for the record named `aad` (e.g. the account's store key). */
export function seal(key: StoreKey, plaintext: string, aad: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
}

/**
 * Opens what {@link seal} made for the same `aad`.
 * @throws Error (no detail of the data) when the key is another one, the record was altered or moved, or it is no sealed form
 */
export function open(key: StoreKey, sealed: string, aad: string): string {
  const parts = sealed.split('.');
  if (parts.length !== 4 || parts[0] !== 'v1') throw new Error('not a sealed record of this version');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parts[1], 'base64url'));
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(Buffer.from(parts[3], 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(parts[2], 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new Error('it was sealed with another key, or altered');
  }
}

/** A check value of the key (HMAC, 16 hex): the same on every machine that holds the same key, and no help in finding the key. */
export function keyCheck(key: StoreKey): string {
  return createHmac('sha256', key).update('claude-router state-store key check').digest('hex').slice(0, 16);
}
