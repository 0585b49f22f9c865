import assert from 'node:assert/strict';
import type { FakeUpstream } from '../../src/sim';
import { ManualClock, call, closeAll, oauthHeaders, postMessage, twoAccounts, withSim } from './helpers';

const EXPIRED = 'OAuth token has expired. Please obtain a new token or refresh your existing token.';

function refresh(sim: FakeUpstream, token: string) {
  return call(sim.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: token, client_id: '9d1c250a-e61b-44d9-88ed-5944d1962f5e' }),
  });
}

describe('sim: OAuth tokens', () => {
  const opened: FakeUpstream[] = [];
  afterEach(() => closeAll(opened));

  it('refresh rotates both tokens; the old access token gets 401 and the old refresh token invalid_grant', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts({ accessTokenTtlMs: 3_600_000 }) });
    assert.equal(sim.tokenUrl, `${sim.url}/v1/oauth/token`);
    const r = await refresh(sim, 'ref-a');
    assert.equal(r.status, 200);
    const g = r.json();
    assert.equal(g.access_token, 'sk-ant-oat01-sim-a-1');
    assert.equal(g.refresh_token, 'sk-ant-ort01-sim-a-1');
    assert.equal(g.expires_in, 3600);
    assert.equal(g.token_type, 'Bearer');
    assert.equal(g.scope, 'user:inference user:profile');
    assert.equal(sim.refreshCount('a'), 1);
    assert.equal(sim.account('a').accessToken, g.access_token);
    assert.equal(sim.account('a').refreshToken, g.refresh_token);

    const old = await postMessage(sim, 'tok-a');
    assert.equal(old.status, 401);
    assert.deepEqual(old.json(), { type: 'error', error: { type: 'authentication_error', message: EXPIRED } });
    assert.equal(sim.requests[sim.requests.length - 1].account, 'a', 'superseded token still names its account');
    assert.equal((await postMessage(sim, g.access_token)).status, 200);

    const again = await refresh(sim, 'ref-a');
    assert.equal(again.status, 400);
    assert.deepEqual(again.json(), { error: 'invalid_grant', error_description: 'Refresh token not found or invalid' });
    const unknown = await refresh(sim, 'nope');
    assert.equal(unknown.status, 400);
    assert.equal(unknown.json().error, 'invalid_grant');
    assert.equal(sim.refreshCount('a'), 1);

    const second = await refresh(sim, g.refresh_token);
    assert.equal(second.json().access_token, 'sk-ant-oat01-sim-a-2');
    assert.equal(sim.refreshCount('a'), 2);
    assert.equal(sim.refreshCount('b'), 0);
    assert.equal((await postMessage(sim, 'tok-b')).status, 200, 'other accounts untouched');
  });

  it('expire_token: 401 on every endpoint until the account refreshes, then 200 on the new token', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts() });
    sim.injectFault('a', { kind: 'expire_token' }, 5);
    assert.deepEqual(sim.account('a').pendingFaults, [], 'persistent, not queued');
    for (let i = 0; i < 2; i++) {
      const r = await postMessage(sim, 'tok-a');
      assert.equal(r.status, 401);
      assert.equal(r.json().error.message, EXPIRED);
    }
    assert.equal(sim.requests[0].fault, 'expire_token');
    assert.equal((await call(`${sim.url}/api/oauth/usage`, { headers: oauthHeaders('tok-a') })).status, 401);
    const g = (await refresh(sim, 'ref-a')).json();
    assert.equal((await postMessage(sim, 'tok-a')).status, 401, 'old token stays dead');
    assert.equal((await postMessage(sim, g.access_token)).status, 200);
  });

  it('clearFaults revives an expired (not superseded) token', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts() });
    sim.injectFault('a', { kind: 'expire_token' });
    assert.equal((await postMessage(sim, 'tok-a')).status, 401);
    sim.clearFaults('a');
    assert.equal((await postMessage(sim, 'tok-a')).status, 200);
  });

  it('enforceTokenExpiry: the access token dies after its TTL on the injected clock', async () => {
    const clock = new ManualClock();
    const sim = await withSim(opened, { now: clock.now, enforceTokenExpiry: true, accounts: twoAccounts({ accessTokenTtlMs: 60_000 }) });
    assert.equal((await postMessage(sim, 'tok-a')).status, 200);
    clock.advance(60_000);
    assert.equal((await postMessage(sim, 'tok-a')).status, 401);
    const g = (await refresh(sim, 'ref-a')).json();
    assert.equal(g.expires_in, 60);
    assert.equal((await postMessage(sim, g.access_token)).status, 200);
  });

  it('authorization_code grant issues tokens for sim-code-<label>, needs a code_verifier', async () => {
    const sim = await withSim(opened, { accounts: [{ label: 'fresh', accessToken: 'tok-fresh' }] });
    const post = (b: object) => call(sim.tokenUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) });
    const noVerifier = await post({ grant_type: 'authorization_code', code: 'sim-code-fresh' });
    assert.equal(noVerifier.status, 400);
    const bad = await post({ grant_type: 'authorization_code', code: 'sim-code-other', code_verifier: 'v' });
    assert.equal(bad.status, 400);
    assert.equal(bad.json().error, 'invalid_grant');
    const ok = await post({ grant_type: 'authorization_code', code: 'sim-code-fresh', code_verifier: 'v'.repeat(43), state: 's', redirect_uri: 'x' });
    assert.equal(ok.status, 200);
    const g = ok.json();
    assert.match(g.access_token, /^sk-ant-oat01-sim-fresh-\d+$/);
    assert.match(g.refresh_token, /^sk-ant-ort01-sim-fresh-\d+$/);
    assert.equal((await postMessage(sim, 'tok-fresh')).status, 401, 'login replaces the old token');
    assert.equal((await postMessage(sim, g.access_token)).status, 200);
    assert.equal((await refresh(sim, g.refresh_token)).status, 200, 'the new refresh token works');
    const unsupported = await post({ grant_type: 'password' });
    assert.equal(unsupported.status, 400);
  });
});
