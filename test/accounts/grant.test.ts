/**
 * Token lifetimes (src/accounts/grant.ts): an account's grant time is recorded at sign-in, kept by
 * every refresh, unknown for an imported token or older credentials; an `invalid_grant` is
 * explained as the likely end of the refresh chain only on an old grant, never on a race.
 */
import { strict as assert } from 'node:assert';
import { DAY_MS, GRANT_WALL_EXPLAIN_DAYS, grantAgeDays, grantAgeText, grantWarns, invalidGrantReason } from '../../src/accounts/grant';
import { MemoryCredentialStore } from '../../src/accounts/memoryCredentialStore';
import { RefreshError, type TokenRefresher } from '../../src/accounts/oauth';
import { exchangeCode, startPkceLogin } from '../../src/accounts/oauthLogin';
import { TokenManager } from '../../src/accounts/tokenManager';
import { startFakeUpstream } from '../../src/sim';

const T0 = Date.UTC(2026, 10, 1, 12);

describe('grant age (days) and its words', () => {
  it('counts whole days since the sign-in; unknown stays unknown and never warns', () => {
    assert.equal(grantAgeDays(T0, T0 + 12 * DAY_MS + 5_000), 12);
    assert.equal(grantAgeDays(T0, T0 + DAY_MS - 1), 0);
    assert.equal(grantAgeDays(null, T0), null);
    assert.equal(grantAgeDays(undefined, T0), null);
    assert.equal(grantAgeText(12), 'signed in 12 d ago');
    assert.equal(grantAgeText(0), 'signed in today');
    assert.equal(grantAgeText(null), 'grant age unknown');
    assert.equal(grantWarns(21, 21), true);
    assert.equal(grantWarns(20, 21), false);
    assert.equal(grantWarns(null, 21), false);
    assert.equal(grantWarns(300, 0), false, '0 turns the warning off');
  });

  it('invalid_grant on an old grant is the likely end of the refresh chain; on a young or unknown one only the refusal', () => {
    const old = invalidGrantReason(T0 - 27 * DAY_MS, T0, 21);
    assert.match(old, /invalid_grant/);
    assert.match(old, /signed in 27 d ago: likely the end of its refresh chain/);
    assert.match(old, /sign in again/);
    assert.equal(invalidGrantReason(T0 - 5 * DAY_MS, T0, 21), 'refresh token was rejected (invalid_grant)');
    assert.equal(invalidGrantReason(null, T0, 21), 'refresh token was rejected (invalid_grant)');
    // The warning later than the wall, or off: still explained past GRANT_WALL_EXPLAIN_DAYS.
    assert.match(invalidGrantReason(T0 - GRANT_WALL_EXPLAIN_DAYS * DAY_MS, T0, 40), /end of its refresh chain/);
    assert.match(invalidGrantReason(T0 - GRANT_WALL_EXPLAIN_DAYS * DAY_MS, T0, 0), /end of its refresh chain/);
    assert.doesNotMatch(invalidGrantReason(T0 - 22 * DAY_MS, T0, 0), /refresh chain/);
  });
});

describe('grant time in the credentials', () => {
  it('a sign-in (the code exchange) records its time: now(), epoch ms', async () => {
    const sim = await startFakeUpstream({ accounts: [{ label: 'me', accessToken: 'sk-ant-oat01-old', refreshToken: 'sk-ant-ort01-old' }] });
    try {
      const login = startPkceLogin();
      const creds = await exchangeCode(sim.tokenUrl, login, `sim-code-me#${login.state}`, () => T0);
      assert.equal(creds.grantedAtMs, T0);
    } finally {
      await sim.close();
    }
  });

  it('a refresh keeps the grant time, however often; the manager reports it before and after', async () => {
    const store = new MemoryCredentialStore();
    await store.set('a', { accessToken: 'sk-ant-oat01-0', refreshToken: 'sk-ant-ort01-0', expiresAtMs: T0 - 1, grantedAtMs: T0 - 10 * DAY_MS });
    let n = 0;
    const refresher: TokenRefresher = async () => {
      n++;
      return { accessToken: `sk-ant-oat01-${n}`, refreshToken: `sk-ant-ort01-${n}`, expiresAtMs: T0 - 1 }; // expired at once: each current() waits for its refresh
    };
    const tokens = new TokenManager(store, refresher, () => T0);
    assert.equal(tokens.grantedAt('a'), undefined, 'not read yet');
    await tokens.readGrants(['a']);
    assert.equal(tokens.grantedAt('a'), T0 - 10 * DAY_MS);
    for (let i = 0; i < 3; i++) await tokens.current('a'); // expired each time: three refreshes
    assert.equal(n, 3);
    const stored = await store.get('a');
    assert.equal(stored?.accessToken, 'sk-ant-oat01-3');
    assert.equal(stored?.grantedAtMs, T0 - 10 * DAY_MS, 'the refreshed pair keeps the original sign-in time');
    assert.equal(tokens.grantedAt('a'), T0 - 10 * DAY_MS);
  });

  it('older credentials without a grant time keep working and read as unknown (null)', async () => {
    const store = new MemoryCredentialStore();
    await store.set('old', { accessToken: 'sk-ant-oat01-0', refreshToken: 'sk-ant-ort01-0', expiresAtMs: T0 - 1 });
    const tokens = new TokenManager(
      store,
      async () => ({ accessToken: 'sk-ant-oat01-1', refreshToken: 'sk-ant-ort01-1', expiresAtMs: T0 + 3_600_000 }),
      () => T0,
    );
    assert.equal((await tokens.current('old')).accessToken, 'sk-ant-oat01-1');
    assert.equal(tokens.grantedAt('old'), null);
    assert.equal((await store.get('old'))?.grantedAtMs, undefined);
    assert.equal(grantAgeText(grantAgeDays(tokens.grantedAt('old'), T0)), 'grant age unknown');
  });

  it('a new sign-in stored underneath is a new grant: invalidate reads its time', async () => {
    const store = new MemoryCredentialStore();
    await store.set('a', { accessToken: 'sk-ant-oat01-0', refreshToken: 'sk-ant-ort01-0', grantedAtMs: T0 - 30 * DAY_MS });
    const tokens = new TokenManager(
      store,
      async () => assert.fail('no refresh'),
      () => T0,
    );
    await tokens.current('a');
    await store.set('a', { accessToken: 'sk-ant-oat01-new', refreshToken: 'sk-ant-ort01-new', grantedAtMs: T0 });
    tokens.invalidate('a');
    await new Promise((r) => setImmediate(r));
    assert.equal(tokens.grantedAt('a'), T0);
  });
});

describe('invalid_grant: the end of the chain or a lost race', () => {
  it('a refused newest refresh token is thrown (the pair is kept in the store), with its grant time for the explanation', async () => {
    const store = new MemoryCredentialStore();
    const pair = { accessToken: 'sk-ant-oat01-0', refreshToken: 'sk-ant-ort01-0', expiresAtMs: T0 - 1, grantedAtMs: T0 - 28 * DAY_MS };
    await store.set('a', pair);
    const tokens = new TokenManager(
      store,
      async () => {
        throw new RefreshError('invalid_grant', 'token refresh failed: invalid_grant');
      },
      () => T0,
    );
    await assert.rejects(tokens.current('a'), (e: unknown) => e instanceof RefreshError && e.failure === 'invalid_grant');
    assert.deepEqual(await store.get('a'), pair, 'a failed refresh never discards a token');
    assert.match(invalidGrantReason(tokens.grantedAt('a'), T0, 21), /signed in 28 d ago: likely the end of its refresh chain/);
  });

  it('a superseded refresh token (another process refreshed first) is no failure at all: its pair is adopted, nothing is explained', async () => {
    const store = new MemoryCredentialStore();
    await store.set('a', { accessToken: 'sk-ant-oat01-0', refreshToken: 'sk-ant-ort01-0', expiresAtMs: T0 - 1, grantedAtMs: T0 - 28 * DAY_MS });
    // The other process rotates the pair and stores it while ours is at the token endpoint; ours is refused as spent.
    const tokens = new TokenManager(
      store,
      async () => {
        await store.set('a', { accessToken: 'sk-ant-oat01-other', refreshToken: 'sk-ant-ort01-other', expiresAtMs: T0 + 3_600_000, grantedAtMs: T0 - 28 * DAY_MS });
        throw new RefreshError('invalid_grant', 'token refresh failed: invalid_grant');
      },
      () => T0,
    );
    const creds = await tokens.current('a');
    assert.equal(creds.accessToken, 'sk-ant-oat01-other');
    assert.equal(tokens.grantedAt('a'), T0 - 28 * DAY_MS);
  });
});
