/**
 * Whether this machine's key is the pool's, for the shared credential store
 * (sharedCredentials.ts): the key check record in Redis (`keyCheck`: an HMAC of the key) is this
 * key's, or — when it is not — one of the pool's sealed pairs opens with this key, which proves the
 * record was not written with the pool's key: someone with write access to Redis altered it, and
 * it is rewritten (docs/security.md#the-shared-store).
 */
import type { StoreConnection } from './connection';
import { keyCheck, open, type StoreKey } from './encryption';
import { storeKeys } from './keys';

/** Sealed pairs tried at most when the key check record does not match. */
const PAIRS_TRIED = 20;

/**
 * @param keySource where this machine's key comes from, in words (for the messages)
 * @returns true when the key is the pool's (the record rewritten when it was forged); otherwise
 *   why not, in words, for the store's problem (never a key or token)
 */
export async function verifyPoolKey(conn: StoreConnection, key: StoreKey, keySource: string, log: { warn(message: string): void }): Promise<true | string> {
  const check = keyCheck(key);
  const redis = conn.redis;
  await redis.set(storeKeys.keyCheck, check, 'NX');
  if ((await redis.get(storeKeys.keyCheck)) === check) return true;
  const proof = await poolPairsOpen(conn, key);
  if (proof === 'open') {
    await redis.set(storeKeys.keyCheck, check);
    log.warn(
      `state store: the key check record in Redis (${storeKeys.keyCheck}) is not authentic: it was not written with the pool's key (${keySource} opens the pool's tokens), so someone with write access to Redis altered it; this router rewrote it and keeps sharing credentials (docs/security.md#the-shared-store)`,
    );
    return true;
  }
  if (proof === 'closed') return `the pool's tokens are sealed with another key than ${keySource}`;
  return `the key check record in Redis (${storeKeys.keyCheck}) does not match ${keySource}, and the pool holds no token to tell whether the pool uses another key or the record is not authentic (altered by someone without the key; then delete it)`;
}

/** Whether the pool's sealed pairs open with `key`: `open` when one does, `closed` when some exist and none does, `none` without any. */
async function poolPairsOpen(conn: StoreConnection, key: StoreKey): Promise<'open' | 'closed' | 'none'> {
  const prefix = storeKeys.credentials('');
  const [, keys] = await conn.redis.scan('0', 'MATCH', `${prefix}*`, 'COUNT', 1000);
  let found = false;
  for (const k of keys.slice(0, PAIRS_TRIED)) {
    const blob = await conn.redis.hget(k, 'blob');
    if (!blob) continue;
    found = true;
    try {
      open(key, blob, k);
      return 'open';
    } catch {
      /* another key's, or no sealed pair */
    }
  }
  return found ? 'closed' : 'none';
}
