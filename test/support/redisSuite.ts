/** Mocha hooks for the in-process store tests (kept apart from redisServer.ts, which the benchmarks import too). */
import type { CredentialStore } from '../../src/accounts/types';
import { parseStoreUrl } from '../../src/config/storeUrl';
import { StoreConnection } from '../../src/store/connection';
import type { StoreKey } from '../../src/store/encryption';
import { SharedCredentialStore } from '../../src/store/sharedCredentials';
import { startRedis, type RedisServer } from './redisServer';

const quiet = { info: () => undefined, warn: () => undefined };

/** The suite's redis-server and what each test opened (see {@link redisForSuite}). */
export interface RedisSuite {
  server(): RedisServer;
  closeAfterTest(close: () => Promise<void>): void;
}

/**
 * The mocha hooks of an in-process store test: one redis-server for the suite (`before`/`after`),
 * and what each test opened closed after it, last first (`afterEach`). Call inside `describe`.
 */
export function redisForSuite(): RedisSuite {
  let redis: RedisServer | undefined;
  const closers: (() => Promise<void>)[] = [];
  before(async () => (redis = await startRedis()));
  after(() => redis?.close());
  afterEach(async () => {
    while (closers.length) await closers.pop()!();
  });
  return {
    server: () => redis!,
    closeAfterTest: (close) => void closers.push(close),
  };
}

/** A router's shared credentials on the suite's redis-server, over `local` (its copy), with the pool's `key`; closed after the test. */
export async function sharedCredentialsOn(suite: RedisSuite, local: CredentialStore, key: StoreKey): Promise<SharedCredentialStore> {
  const conn = new StoreConnection(parseStoreUrl(suite.server().url), { log: quiet, key });
  await conn.start();
  const shared = new SharedCredentialStore(local, conn, key, { log: quiet, keySource: 'the test key' });
  await shared.reconcile();
  suite.closeAfterTest(async () => {
    shared.close();
    await conn.close();
  });
  return shared;
}
