import { strict as assert } from 'node:assert';
import { policyFrom } from '../../src/config/schema';
import { accounts, callRouter, routerStatus, startHarness, type Harness } from '../support/routerHarness';

describe('policy behaviour in the running proxy', () => {
  let h: Harness;
  afterEach(() => h?.close());

  it('tries a pay-as-you-go fallback account only after every other account, and never binds to it', async () => {
    const spec = [...accounts('a'), { label: 'payg', accessToken: 'sk-ant-api03-test-payg', apiKey: true }];
    h = await startHarness(spec, {
      routing: { sessionAffinity: true },
      configAccounts: [
        { label: 'payg', apiKey: 'sk-ant-api03-test-payg', fallback: true },
        { label: 'a', accessToken: 'sk-ant-oat01-test-a', refreshToken: 'sk-ant-ort01-test-a' },
      ],
    });
    const first = await callRouter(h, { session: 's1' });
    assert.equal(first.headers['x-claude-router-account'], 'a', 'the fallback is listed first in the config but tried last');
    h.sim.injectFault('a', { kind: 'exhaust', window: '5h', resetInMs: 3_600_000 });
    const viaFallback = await callRouter(h, { session: 's1' });
    assert.equal(viaFallback.status, 200);
    assert.equal(viaFallback.headers['x-claude-router-account'], 'payg');
    const seen = h.sim.requests.filter((q) => q.account === 'payg').at(-1)!;
    assert.equal(seen.headers['x-api-key'], 'sk-ant-api03-test-payg');
    assert.equal(seen.headers.authorization, undefined);
    assert.ok(!(seen.headers['anthropic-beta'] ?? '').includes('oauth-2025-04-20'), 'no OAuth beta for an API key');
    const st = await routerStatus(h);
    assert.equal(st.accounts.find((x: any) => x.label === 'a').boundSessions, 1, 'the session stays bound to its Anthropic account');
    assert.equal(st.accounts.find((x: any) => x.label === 'payg').boundSessions, 0);
    await h.router.close();
    const last = h.decisions().at(-1)!;
    assert.equal(last.servedByFallback, true);
    assert.equal(last.candidates.at(-1)!.account, 'payg');
  });

  it('a reload that switches affinity off clears every binding; switching it on starts empty', async () => {
    h = await startHarness(accounts('a', 'b'), { routing: { sessionAffinity: true } });
    await callRouter(h, { session: 's1' });
    await callRouter(h, { session: 's2' });
    assert.equal((await routerStatus(h)).boundSessions, 2);
    const engine = h.router.engine;
    engine.applyConfig({ ...engine.config, policy: policyFrom({ sessionAffinity: false }) });
    assert.equal((await routerStatus(h)).boundSessions, 0);
    await callRouter(h, { session: 's3' });
    assert.equal((await routerStatus(h)).boundSessions, 0, 'nothing binds while affinity is off');
    engine.applyConfig({ ...engine.config, policy: policyFrom({ sessionAffinity: true }) });
    assert.equal((await routerStatus(h)).boundSessions, 0);
    assert.equal((await routerStatus(h)).config.generation, 3);
  });

  it('round-robin spreads consecutive requests over the usable accounts and never binds', async () => {
    h = await startHarness(accounts('a', 'b', 'c'), { routing: { strategy: 'round-robin', sessionAffinity: true } });
    const served: string[] = [];
    for (let i = 0; i < 6; i++) served.push((await callRouter(h, { session: 'same' })).headers['x-claude-router-account']);
    assert.deepEqual(new Set(served), new Set(['a', 'b', 'c']));
    assert.notEqual(served[0], served[1]);
    assert.equal((await routerStatus(h)).boundSessions, 0);
  });

  it('with CLAUDE_ROUTER_QUOTA_ROUTING=off, configured order (primary first) decides, not quota', async () => {
    const spec = accounts('a', 'b', 'c').map((x, i) => ({ ...x, sevenDayResetInMs: (i + 1) * 86_400_000, initialSevenDayUsed: 0.5 }));
    h = await startHarness(spec, { routing: { primaryAccount: 'c' }, env: { CLAUDE_ROUTER_QUOTA_ROUTING: 'off' } });
    for (let i = 0; i < 3; i++) await h.router.poller.tick(); // evidence that would make expiry-first pick a
    const r = await callRouter(h, { session: 's' });
    assert.equal(r.headers['x-claude-router-account'], 'c');
    const st = await routerStatus(h);
    assert.equal(st.policy.quotaRouting, false);
    assert.equal(st.config.sources['quota-routing'], 'env CLAUDE_ROUTER_QUOTA_ROUTING');
    h.sim.injectFault('c', { kind: 'throttle', retryAfterS: 30 });
    assert.equal((await callRouter(h, { session: 's' })).headers['x-claude-router-account'], 'a', 'then configured order');
  });
});
