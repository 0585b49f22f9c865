import { strict as assert } from 'node:assert';
import { policyFrom } from '../../src/config/schema';
import { accounts, callRouter, routerStatus, startHarness, type Harness } from '../support/routerHarness';

describe('strategies in the running proxy', () => {
  let h: Harness;
  afterEach(() => h?.close());

  it('a live switch of `strategy` changes the next decision, and /status and the record show it', async () => {
    h = await startHarness(accounts('a', 'b', 'c'));
    const engine = h.router.engine;
    const first = await callRouter(h, {});
    const filled = first.headers['x-claude-router-account'];
    assert.equal((await callRouter(h, {})).headers['x-claude-router-account'], filled, 'fill-first keeps filling one account');
    engine.applyConfig({ ...engine.config, policy: policyFrom({ strategy: 'single-account', singleAccountLabel: 'c' }, {}) });
    assert.equal((await routerStatus(h)).policy.strategy, 'single-account');
    for (let i = 0; i < 3; i++) assert.equal((await callRouter(h, {})).headers['x-claude-router-account'], 'c');
    engine.applyConfig({ ...engine.config, policy: policyFrom({ strategy: 'sequential-drain' }, {}) });
    assert.equal((await callRouter(h, {})).headers['x-claude-router-account'], 'a');
    await h.router.close();
    const records = h.decisions();
    assert.deepEqual(
      records.map((r) => r.strategy),
      ['fill-first', 'fill-first', 'single-account', 'single-account', 'single-account', 'sequential-drain'],
    );
    assert.ok(records.every((r) => r.decidedBy !== undefined && r.candidates.every((c) => c.filter !== undefined)));
  });

  it('single-account: when the pinned account is exhausted the client gets the "no usable account" answer, no failover', async () => {
    h = await startHarness(accounts('a', 'b'), { routing: { strategy: 'single-account', singleAccountLabel: 'a' } });
    h.sim.injectFault('a', { kind: 'exhaust', window: '5h', resetInMs: 3_600_000 });
    await callRouter(h, {});
    const r = await callRouter(h, {});
    assert.equal(r.status, 429);
    assert.equal(h.sim.requests.filter((q) => q.account === 'b').length, 0, 'b is never tried');
    assert.ok(Number(r.headers['retry-after']) > 600, `the recovery of the pinned account a, not of the usable b: ${r.headers['retry-after']}`);
    assert.match(r.text, /\ba\b/);
  });

  it('a strategy with affinity binds the session and keeps it on its account', async () => {
    h = await startHarness(accounts('a', 'b', 'c'), { routing: { strategy: 'capacity-weighted', sessionAffinity: true } });
    const served = new Set<string>();
    for (let i = 0; i < 5; i++) served.add((await callRouter(h, { session: 'conv-1' })).headers['x-claude-router-account']);
    assert.equal(served.size, 1);
    assert.equal((await routerStatus(h)).boundSessions, 1);
  });
});
