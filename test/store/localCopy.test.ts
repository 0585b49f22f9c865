/**
 * This machine's copy of the pool's credentials (credentials.json, SecretStorage) follows the pool,
 * and a pair a person stores there (`accounts login`) goes up to it (docs/shared-pool.md). The copy
 * is watched, and a read of it can be slow: it may return a pair the store has rewritten since.
 * Such a pair is no news — sent up, its spent refresh token would replace the pool's pair and the
 * next refresh anywhere would be refused. A SharedCredentialStore on a real redis-server.
 */
import { strict as assert } from 'node:assert';
import { MemoryCredentialStore } from '../../src/accounts/memoryCredentialStore';
import type { Credentials } from '../../src/accounts/types';
import { keyFromText, open } from '../../src/store/encryption';
import { storeKeys } from '../../src/store/keys';
import type { SharedCredentialStore } from '../../src/store/sharedCredentials';
import { redisForSuite, sharedCredentialsOn } from '../support/redisSuite';

const KEY = keyFromText('cd'.repeat(32), 'the test key');
const pair = (n: number): Credentials => ({ accessToken: `sk-ant-oat01-a-${n}`, refreshToken: `sk-ant-ort01-a-${n}`, expiresAtMs: 1_900_000_000_000 });

/** A local copy whose reads return what the copy held when they began, but only once the test lets them finish. */
class SlowLocalCopy extends MemoryCredentialStore {
  gate: Promise<void> | undefined;
  override async get(label: string): Promise<Credentials | undefined> {
    const found = await super.get(label);
    await this.gate;
    return found;
  }
}

/** `reader.localChanged('a')` whose read of the copy begins now and ends only after `meanwhile` ran (the watcher's slow read). */
async function lateRead(reader: SharedCredentialStore, local: SlowLocalCopy, meanwhile: () => Promise<void>): Promise<boolean> {
  let release!: () => void;
  local.gate = new Promise((r) => (release = r));
  const news = reader.localChanged('a');
  await new Promise((r) => setImmediate(r));
  local.gate = undefined;
  await meanwhile();
  release();
  return news;
}

describe("shared pool: this machine's copy of the credentials", function () {
  this.timeout(30_000);
  const suite = redisForSuite();

  async function start(): Promise<{ local: SlowLocalCopy; shared: SharedCredentialStore }> {
    const local = new SlowLocalCopy();
    return { local, shared: await sharedCredentialsOn(suite, local, KEY) };
  }

  const poolPair = async (): Promise<Credentials> => {
    const blob = (await suite.server().client.hget(storeKeys.credentials('a'), 'blob'))!;
    return JSON.parse(open(KEY, blob, storeKeys.credentials('a'))) as Credentials;
  };

  it('a slow read that finds a pair the store has rewritten since is no news: the pool keeps the newer pair', async () => {
    const { local, shared } = await start();
    await shared.set('a', pair(1));
    // The watcher saw the copy change and reads it; the read is slow.
    // Meanwhile a refresh rotates the pair: the pool and the copy hold pair 2.
    assert.equal(await lateRead(shared, local, () => shared.set('a', pair(2))), false, 'pair 1 came from this store');
    assert.equal((await poolPair()).refreshToken, pair(2).refreshToken, 'the pool still holds the rotated pair');
  });

  it("two windows over one copy (VS Code windows share SecretStorage): a late read of the other's rotated-away pair is no news either", async () => {
    const local = new SlowLocalCopy();
    const leader = await sharedCredentialsOn(suite, local, KEY);
    const follower = await sharedCredentialsOn(suite, local, KEY);
    await leader.set('a', pair(1));
    assert.equal(await follower.localChanged('a'), false, "the leader's pair came through the pool");
    assert.equal(await lateRead(follower, local, () => leader.set('a', pair(2))), false, 'pair 1 is one the pool held');
    assert.equal((await poolPair()).refreshToken, pair(2).refreshToken, 'the pool still holds the rotated pair');
  });

  it('a pair a person stored in the copy is news: it goes to the pool', async () => {
    const { local, shared } = await start();
    await shared.set('a', pair(1));
    await local.set('a', pair(9)); // `accounts login` on this machine
    assert.equal(await shared.localChanged('a'), true);
    assert.equal((await poolPair()).refreshToken, pair(9).refreshToken);
    assert.equal(await shared.localChanged('a'), false, 'told once');
  });
});
