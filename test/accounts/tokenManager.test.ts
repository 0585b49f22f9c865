import { strict as assert } from 'node:assert';
import { MemoryCredentialStore } from '../../src/accounts/memoryCredentialStore';
import { TokenManager } from '../../src/accounts/tokenManager';
import type { TokenRefresher } from '../../src/accounts/oauth';

/** A refresher the test releases by hand. */
function gatedRefresher() {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let calls = 0;
  const refresher: TokenRefresher = async () => {
    calls++;
    await gate;
    return { accessToken: `sk-ant-oat01-new-${calls}`, refreshToken: `sk-ant-ort01-new-${calls}`, expiresAtMs: Date.now() + 3_600_000 };
  };
  return { refresher, release: () => release(), calls: () => calls };
}

describe('TokenManager races', () => {
  it('a refresh that finishes after the account was removed never brings its token back', async () => {
    const store = new MemoryCredentialStore();
    await store.set('a', { accessToken: 'sk-ant-oat01-old', refreshToken: 'sk-ant-ort01-old' });
    const g = gatedRefresher();
    const tokens = new TokenManager(store, g.refresher);
    const pending = tokens.refresh('a', 'sk-ant-oat01-old');
    await store.delete('a'); // "Remove account" while the refresh runs
    g.release();
    await assert.rejects(pending, /removed/);
    assert.equal(await store.get('a'), undefined);
  });

  it('a refresh of the old lineage never overwrites credentials from a new sign-in', async () => {
    const store = new MemoryCredentialStore();
    await store.set('a', { accessToken: 'sk-ant-oat01-old', refreshToken: 'sk-ant-ort01-old' });
    const g = gatedRefresher();
    const tokens = new TokenManager(store, g.refresher);
    const pending = tokens.refresh('a', 'sk-ant-oat01-old');
    await store.set('a', { accessToken: 'sk-ant-oat01-signed-in', refreshToken: 'sk-ant-ort01-signed-in' });
    g.release();
    assert.equal((await pending).accessToken, 'sk-ant-oat01-signed-in');
    assert.equal((await store.get('a'))?.refreshToken, 'sk-ant-ort01-signed-in');
  });

  it('concurrent callers share one refresh', async () => {
    const store = new MemoryCredentialStore();
    await store.set('a', { accessToken: 'sk-ant-oat01-old', refreshToken: 'sk-ant-ort01-old' });
    const g = gatedRefresher();
    const tokens = new TokenManager(store, g.refresher);
    const all = Promise.all([1, 2, 3].map(() => tokens.refresh('a', 'sk-ant-oat01-old')));
    g.release();
    const got = await all;
    assert.equal(g.calls(), 1);
    assert.ok(got.every((c) => c.accessToken === 'sk-ant-oat01-new-1'));
    assert.equal((await store.get('a'))?.refreshToken, 'sk-ant-ort01-new-1', 'the rotated pair is stored');
  });
});

describe('TokenManager.ready (the request path without a promise)', () => {
  it('gives cached credentials only while current() would give them at once, never an expiring or expired token', async () => {
    let now = 1_000_000_000_000;
    const store = new MemoryCredentialStore();
    await store.set('a', { accessToken: 'sk-ant-oat01-a', refreshToken: 'sk-ant-ort01-a', expiresAtMs: now + 3_600_000 });
    const g = gatedRefresher();
    const tokens = new TokenManager(store, g.refresher, () => now);
    assert.equal(tokens.ready('a'), undefined, 'not read from the store yet');
    assert.equal((await tokens.current('a')).accessToken, 'sk-ant-oat01-a');
    assert.equal(tokens.ready('a')?.accessToken, 'sk-ant-oat01-a');
    now += 3_600_000 - 4 * 60_000; // within the refresh skew: current() starts a background refresh
    assert.equal(tokens.ready('a'), undefined);
    now += 5 * 60_000; // expired: current() waits for the refresh
    assert.equal(tokens.ready('a'), undefined);
    assert.equal(g.calls(), 0, 'ready() never refreshes');
    assert.equal(tokens.ready('missing'), undefined);
  });

  it('gives credentials that cannot or need not be refreshed at once (no refresh token, no known expiry)', async () => {
    const store = new MemoryCredentialStore();
    await store.set('key', { accessToken: 'sk-ant-oat01-long-lived', expiresAtMs: 1 });
    await store.set('open', { accessToken: 'sk-ant-oat01-open', refreshToken: 'sk-ant-ort01-open' });
    const tokens = new TokenManager(store, gatedRefresher().refresher, () => 2_000_000_000_000);
    await tokens.current('key');
    await tokens.current('open');
    assert.equal(tokens.ready('key')?.accessToken, 'sk-ant-oat01-long-lived');
    assert.equal(tokens.ready('open')?.accessToken, 'sk-ant-oat01-open');
  });
});
