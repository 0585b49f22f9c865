import { strict as assert } from 'node:assert';
import { MemoryCredentialStore } from '../../src/accounts/memoryCredentialStore';
import { TokenManager, type SaveFailure } from '../../src/accounts/tokenManager';
import { RefreshError, type TokenRefresher } from '../../src/accounts/oauth';
import type { Credentials } from '../../src/accounts/types';
import { TokenRegistry } from '../../src/sim/oauth';
import { eventually } from '../support/routerHarness';

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

describe('TokenManager and an unreadable store', () => {
  it('a store that cannot be read is a store_unreadable failure naming its problem, never a token, and not a network failure', async () => {
    const store = new MemoryCredentialStore();
    store.get = async () => {
      throw new Error('credential store /x/credentials.json is not valid JSON near "sk-ant-oat01-leaked"; fix it or move it away');
    };
    const tokens = new TokenManager(store, gatedRefresher().refresher);
    await assert.rejects(tokens.current('a'), (err: unknown) => {
      assert.ok(err instanceof RefreshError);
      assert.equal(err.failure, 'store_unreadable');
      assert.match(err.message, /credentials\.json is not valid JSON/);
      assert.doesNotMatch(err.message, /leaked/);
      return true;
    });
  });
});

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

describe('TokenManager: a refused token is never handed back', () => {
  it('a caller whose refused token is the one the refresh under way ends in gets a newer pair', async () => {
    const store = new MemoryCredentialStore();
    await store.set('a', { accessToken: 'sk-ant-oat01-old', refreshToken: 'sk-ant-ort01-old' });
    const g = gatedRefresher();
    const tokens = new TokenManager(store, g.refresher);
    const first = tokens.refresh('a', 'sk-ant-oat01-old');
    // Overtaken: the pair the first refresh is about to give was refused too.
    const second = tokens.refresh('a', 'sk-ant-oat01-new-1');
    g.release();
    assert.equal((await first).accessToken, 'sk-ant-oat01-new-1');
    assert.equal((await second).accessToken, 'sk-ant-oat01-new-2');
    assert.equal(g.calls(), 2);
  });

  it('holds() is true only for the newest token: not for an older one, nor while a refresh runs or the store announced a newer pair', async () => {
    const store = new MemoryCredentialStore();
    await store.set('a', { accessToken: 'sk-ant-oat01-old', refreshToken: 'sk-ant-ort01-old' });
    const g = gatedRefresher();
    const tokens = new TokenManager(store, g.refresher);
    await tokens.current('a');
    assert.equal(tokens.holds('a', 'sk-ant-oat01-old'), true);
    const pending = tokens.refresh('a', 'sk-ant-oat01-old');
    assert.equal(tokens.holds('a', 'sk-ant-oat01-old'), false, 'a refresh is under way');
    g.release();
    await pending;
    assert.equal(tokens.holds('a', 'sk-ant-oat01-old'), false);
    assert.equal(tokens.holds('a', 'sk-ant-oat01-new-1'), true);
    tokens.invalidate('a');
    assert.equal(tokens.holds('a', 'sk-ant-oat01-new-1'), false, 'the store announced a change');
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

/**
 * The token endpoint as Anthropic runs it (the sim's registry): every refresh rotates both
 * tokens, and a spent refresh token gets `invalid_grant`.
 */
function rotatingEndpoint() {
  const registry = new TokenRegistry();
  registry.add('a', 'sk-ant-oat01-gen0', 'sk-ant-ort01-gen0', false, 8 * 3_600_000, Date.now());
  const refresher: TokenRefresher = async (refreshToken) => {
    const r = registry.refreshGrant(refreshToken, Date.now());
    if (!r) throw new RefreshError('invalid_grant', 'token refresh failed: invalid_grant');
    return { accessToken: r.grant.access_token, refreshToken: r.grant.refresh_token, expiresAtMs: Date.now() + r.grant.expires_in * 1000 };
  };
  /** Whether the API would take this access token now. */
  const accepts = (accessToken: string) => registry.checkAccess(accessToken, Date.now(), true).ok;
  return { registry, refresher, accepts };
}

/** A memory store whose writes fail while `failing` (or for the next `failNext` writes), like a full disk. */
class FlakyStore extends MemoryCredentialStore {
  failing = false;
  failNext = 0;
  /** Reads that fail next, like an I/O error. */
  failGets = 0;
  override async get(label: string) {
    if (this.failGets > 0) {
      this.failGets--;
      throw Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' });
    }
    return super.get(label);
  }
  override async set(label: string, credentials: Credentials) {
    if (this.failing || this.failNext > 0) {
      this.failNext = Math.max(0, this.failNext - 1);
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    }
    return super.set(label, credentials);
  }
}

/** An expired gen0 pair, as the store holds it before the first refresh. */
const gen0: Credentials = { accessToken: 'sk-ant-oat01-gen0', refreshToken: 'sk-ant-ort01-gen0', expiresAtMs: Date.now() - 1000 };

describe('TokenManager keeps a rotated pair it could not save', () => {
  it('uses the new pair at once, saves it on retry, and the next refresh spends the new refresh token', async () => {
    const api = rotatingEndpoint();
    const store = new FlakyStore();
    await store.set('a', gen0);
    const failures: SaveFailure[] = [];
    const saved: number[] = [];
    const tokens = new TokenManager(store, api.refresher, Date.now, { saveFailed: (f) => failures.push(f), saved: (_l, n) => saved.push(n) });
    store.failNext = 1;

    const first = await tokens.current('a'); // expired: waits for the refresh, whose save fails
    assert.ok(api.accepts(first.accessToken), 'the request goes out with the rotated access token');
    assert.equal(tokens.ready('a')?.accessToken, first.accessToken);
    assert.equal(failures.length, 1);
    assert.equal(failures[0].attempt, 1);
    assert.match(failures[0].reason, /ENOSPC/);
    assert.doesNotMatch(JSON.stringify(failures), /sk-ant-o/, 'no token text is reported');

    await eventually(async () => (await store.get('a'))?.refreshToken === first.refreshToken, 3000, 'the retried save');
    assert.deepEqual(saved, [1]);

    const second = await tokens.refresh('a', first.accessToken);
    assert.ok(api.accepts(second.accessToken), 'refreshed with the rotated refresh token, not the spent one');
    assert.equal((await store.get('a'))?.refreshToken, second.refreshToken);
  });

  it('while saves keep failing, refreshes spend the refresh token held in memory and the stored pair is never deleted', async () => {
    const api = rotatingEndpoint();
    const store = new FlakyStore();
    await store.set('a', gen0);
    let failures = 0;
    const tokens = new TokenManager(store, api.refresher, Date.now, { saveFailed: () => failures++ });
    store.failing = true;

    const first = await tokens.current('a');
    tokens.invalidate(); // a config reload re-reads the store, which still has the spent gen0 pair
    assert.equal((await tokens.current('a')).accessToken, first.accessToken, 'the held pair wins over the older stored one');
    const second = await tokens.refresh('a', first.accessToken);
    assert.ok(api.accepts(second.accessToken));
    assert.equal(api.registry.refreshCount('a'), 2);
    assert.equal(failures, 2);
    assert.equal((await store.get('a'))?.refreshToken, gen0.refreshToken, 'the old pair stays until a save lands');
  });
});

describe('TokenManager keeps a rotated pair whatever the store does after the rotation', () => {
  it('keeps the new pair when reading the store fails right after the token endpoint rotated it', async () => {
    const api = rotatingEndpoint();
    const store = new FlakyStore();
    await store.set('a', gen0);
    const tokens = new TokenManager(store, async (rt) => {
      const grant = await api.refresher(rt);
      store.failGets = 1; // the re-read after the rotation fails
      return grant;
    });
    const first = await tokens.refresh('a', gen0.accessToken);
    assert.ok(api.accepts(first.accessToken), 'the refresh resolves with the rotated pair');
    await eventually(async () => (await store.get('a'))?.refreshToken === first.refreshToken, 3000, 'the pair saved on retry');
    const second = await tokens.refresh('a', first.accessToken);
    assert.ok(api.accepts(second.accessToken), 'the next refresh spends the new refresh token, not the spent one');
  });

  it('keeps its unsaved pair when the clock steps back between two rotations', async () => {
    const api = rotatingEndpoint();
    const store = new FlakyStore();
    await store.set('a', gen0);
    let clock = Date.now();
    const tokens = new TokenManager(store, api.refresher, () => clock);
    const first = await tokens.refresh('a', gen0.accessToken); // saved
    clock -= 60_000; // the system clock is stepped back a minute
    store.failNext = 1;
    const second = await tokens.refresh('a', first.accessToken); // its save fails
    await eventually(async () => (await store.get('a'))?.refreshToken === second.refreshToken, 3000, 'the retried save');
    assert.equal(tokens.ready('a')?.refreshToken ?? (await tokens.current('a')).refreshToken, second.refreshToken);
  });

  it('adopts a sign-in stored while its own save is pending, and never overwrites it', async () => {
    const api = rotatingEndpoint();
    const store = new FlakyStore();
    await store.set('a', gen0);
    const tokens = new TokenManager(store, api.refresher);
    store.failNext = 1;
    await tokens.refresh('a', gen0.accessToken); // held, unsaved, retried in a second
    const login = api.registry.codeGrant('sim-code-a', Date.now())!.grant;
    await store.set('a', { accessToken: login.access_token, refreshToken: login.refresh_token, expiresAtMs: Date.now() + 3_600_000 });
    await new Promise((r) => setTimeout(r, 1_300)); // past the first retry
    assert.equal((await store.get('a'))?.refreshToken, login.refresh_token, 'the sign-in stays in the store');
    assert.equal((await tokens.current('a')).accessToken, login.access_token, 'and is used');
  });
});

describe('TokenManager never adopts a stored pair older than the one it holds', () => {
  it('refreshes with the held refresh token when a stale writer put the spent pair back', async () => {
    const api = rotatingEndpoint();
    const store = new MemoryCredentialStore();
    await store.set('a', gen0);
    const tokens = new TokenManager(store, api.refresher);
    const first = await tokens.current('a');
    assert.equal((await store.get('a'))?.refreshToken, first.refreshToken);
    // Another process (or VS Code window) that read the file before the rotation writes it back.
    await store.set('a', gen0);
    tokens.invalidate(); // a config reload (or VS Code's secret change event) re-reads the store
    assert.equal((await tokens.current('a')).accessToken, first.accessToken);
    api.registry.expire('a'); // hours later the access token stops working: the request gets a 401
    const next = await tokens.refresh('a', first.accessToken);
    assert.ok(api.accepts(next.accessToken), 'not the spent gen0 pair from the store');
    assert.equal((await store.get('a'))?.refreshToken, next.refreshToken, 'the store is right again');
  });

  it('adopts a sign-in stored after its pair (another window or `accounts add`)', async () => {
    const api = rotatingEndpoint();
    const store = new MemoryCredentialStore();
    await store.set('a', gen0);
    const tokens = new TokenManager(store, api.refresher);
    const first = await tokens.current('a');
    const login = api.registry.codeGrant('sim-code-a', Date.now())!.grant;
    await store.set('a', { accessToken: login.access_token, refreshToken: login.refresh_token, expiresAtMs: Date.now() + 3_600_000 });
    tokens.invalidate('a');
    assert.equal((await tokens.current('a')).accessToken, login.access_token);
    assert.equal((await tokens.refresh('a', first.accessToken)).accessToken, login.access_token);
    assert.equal(api.registry.refreshCount('a'), 1, 'no refresh spent on the old lineage');
  });
});
