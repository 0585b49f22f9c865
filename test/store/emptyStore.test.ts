/**
 * A Redis that comes back empty (it persisted nothing) is refilled by the router that stored each
 * pair last (docs/shared-pool.md): another router's copy, whose refresh token the owner may have
 * spent while the store was away, is used for its access token but neither uploaded nor refreshed
 * from while the owner may still return. Two SharedCredentialStores on a real redis-server.
 */
import { strict as assert } from 'node:assert';
import { RefreshError } from '../../src/accounts/oauth';
import { MemoryCredentialStore } from '../../src/accounts/memoryCredentialStore';
import type { Credentials } from '../../src/accounts/types';
import { keyFromText } from '../../src/store/encryption';
import { storeKeys } from '../../src/store/keys';
import type { SharedCredentialStore } from '../../src/store/sharedCredentials';
import { redisForSuite, sharedCredentialsOn } from '../support/redisSuite';

const KEY = keyFromText('ab'.repeat(32), 'the test key');
const pair = (n: number): Credentials => ({ accessToken: `sk-ant-oat01-a-${n}`, refreshToken: `sk-ant-ort01-a-${n}`, expiresAtMs: Date.now() + 3_600_000 });

describe('shared pool: a store that comes back empty', function () {
  this.timeout(30_000);
  const suite = redisForSuite();

  /** A router's credentials: its local copy and the shared store over it. */
  async function router(local = new MemoryCredentialStore()): Promise<{ local: MemoryCredentialStore; shared: SharedCredentialStore }> {
    return { local, shared: await sharedCredentialsOn(suite, local, KEY) };
  }

  it("takes each pair from the router that stored it last, never another's possibly spent copy", async () => {
    const owner = await router();
    const other = await router();
    await owner.shared.set('a', pair(1));
    assert.equal((await other.shared.get('a'))?.refreshToken, pair(1).refreshToken, 'the other router reads the pool');

    // The owner rotates while the store is away (its local copy), the store comes back empty.
    await owner.local.set('a', pair(2));
    await suite.server().client.flushdb();

    assert.equal((await other.shared.get('a'))?.accessToken, pair(1).accessToken, "the other router's copy still serves its access token");
    assert.equal(await suite.server().client.exists(storeKeys.credentials('a')), 0, 'but does not go up');
    await assert.rejects(
      other.shared.exclusiveRefresh('a', () => other.shared.get('a')),
      (err: unknown) => err instanceof RefreshError && err.failure === 'waiting_for_store' && /another router stored it last/.test(err.message),
      'nor is it refreshed from',
    );

    await owner.shared.reconcile(); // what its reconnection does
    assert.equal((await other.shared.get('a'))?.refreshToken, pair(2).refreshToken, "the owner's rotated pair fills the pool, and the other router takes it");
  });
});
