import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { exchangeCode, parsePastedCode, startPkceLogin } from '../../src/accounts/oauthLogin';
import { OAUTH_CLIENT_ID, oauthRefresher } from '../../src/accounts/oauth';
import { version } from '../../package.json';
import { startFakeUpstream } from '../../src/sim';

describe('sign in with Claude (OAuth PKCE, manual code)', () => {
  it('builds an authorize URL with an S256 challenge of the verifier and a separate state', () => {
    const login = startPkceLogin();
    const url = new URL(login.url);
    assert.equal(url.origin + url.pathname, 'https://claude.ai/oauth/authorize');
    assert.equal(url.searchParams.get('client_id'), OAUTH_CLIENT_ID);
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(url.searchParams.get('code_challenge'), createHash('sha256').update(login.verifier).digest('base64url'));
    assert.equal(url.searchParams.get('state'), login.state);
    assert.notEqual(login.state, login.verifier);
    assert.match(url.searchParams.get('scope')!, /user:inference/);
    assert.equal(url.searchParams.get('redirect_uri'), 'https://platform.claude.com/oauth/code/callback');
  });

  it('refuses a pasted code from another sign-in attempt', () => {
    const login = startPkceLogin();
    assert.throws(() => parsePastedCode('abc#not-the-state', login), /another sign-in attempt/);
    assert.deepEqual(parsePastedCode(`abc#${login.state}`, login), { code: 'abc', state: login.state });
  });

  it('refuses a pasted code without its #state (only part of the code copied), saying to paste the whole code', () => {
    const login = startPkceLogin();
    for (const pasted of ['abc', 'abc#', ' abc \n']) assert.throws(() => parsePastedCode(pasted, login), /incomplete: paste the whole code .*including the part after "#"/);
  });

  it('exchanges the pasted code#state for a token pair at the token endpoint', async () => {
    const sim = await startFakeUpstream({ accounts: [{ label: 'me', accessToken: 'sk-ant-oat01-old', refreshToken: 'sk-ant-ort01-old' }] });
    try {
      const login = startPkceLogin();
      const creds = await exchangeCode(sim.tokenUrl, login, `sim-code-me#${login.state}`);
      assert.match(creds.accessToken, /^sk-ant-oat01-/);
      assert.match(creds.refreshToken!, /^sk-ant-ort01-/);
      assert.ok(creds.expiresAtMs! > Date.now());
      await assert.rejects(exchangeCode(sim.tokenUrl, login, `wrong-code#${login.state}`), (e: Error) => /sign-in failed/.test(e.message) && !e.message.includes('sk-ant'));
    } finally {
      await sim.close();
    }
  });

  it('token requests — the code exchange and a refresh — carry the User-Agent claude-router/<version>', async () => {
    const sim = await startFakeUpstream({ accounts: [{ label: 'me', accessToken: 'sk-ant-oat01-old', refreshToken: 'sk-ant-ort01-old' }] });
    try {
      const login = startPkceLogin();
      const creds = await exchangeCode(sim.tokenUrl, login, `sim-code-me#${login.state}`);
      await oauthRefresher(sim.tokenUrl)(creds.refreshToken!);
      const tokenRequests = sim.requests.filter((q) => q.path === '/v1/oauth/token');
      assert.equal(tokenRequests.length, 2);
      for (const q of tokenRequests) assert.equal(q.headers['user-agent'], `claude-router/${version}`);
      assert.match(version, /^\d+\.\d+\.\d+/);
    } finally {
      await sim.close();
    }
  });
});
