import assert from 'node:assert/strict';
import type { FakeUpstream } from '../../src/sim';
import { U, call, closeAll, postMessage, twoAccounts, withSim } from './helpers';

describe('sim: scripted concurrency limit', () => {
  const opened: FakeUpstream[] = [];
  afterEach(() => closeAll(opened));

  it('throttles a request that arrives with more than the limit in flight on its account: 429, unified statuses all allowed, no retry-after', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts(), sseIntervalMs: 40 });
    sim.setConcurrencyLimit('a', 2);
    const replies = await Promise.all([1, 2, 3].map(() => postMessage(sim, 'tok-a', { stream: true })));
    const throttled = replies.filter((r) => r.status === 429);
    assert.equal(throttled.length, 1, replies.map((r) => r.status).join(','));
    const r = throttled[0];
    assert.equal(r.headers['retry-after'], undefined);
    assert.equal(r.json().error.type, 'rate_limit_error');
    const statuses = Object.entries(r.headers).filter(([k]) => k.startsWith(U) && k.endsWith('status') && !k.includes('overage'));
    assert.ok(statuses.length >= 3);
    for (const [k, v] of statuses) assert.equal(v, 'allowed', k);
    assert.deepEqual(sim.requests.map((q) => q.inflight).sort(), [1, 2, 3]);
    assert.equal(sim.requests.find((q) => q.status === 429)?.fault, 'concurrency');
    assert.equal((await postMessage(sim, 'tok-b', { stream: true })).status, 200, 'the limit is per account');
    const state = sim.account('a');
    assert.equal(state.maxInflight, 2);
    assert.equal(state.inflight, 0, 'finished answers are no longer in flight');
    assert.equal(state.concurrencyLimit, 2);
  });

  it('is set and lifted through the control API, which refuses a limit that is not a positive integer', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts() });
    const post = (body: unknown) => call(`${sim.url}/_sim/concurrency`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal((await post({ label: 'a', limit: 1 })).status, 200);
    assert.equal(sim.account('a').concurrencyLimit, 1);
    for (const limit of [0, 1.5, '2', undefined]) assert.equal((await post({ label: 'a', limit })).status, 400, String(limit));
    assert.equal((await post({ label: 'a', limit: null })).status, 200);
    assert.equal(sim.account('a').concurrencyLimit, null);
  });

  it('notes for each request how many had arrived when its answer started', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts() });
    sim.injectFault('a', { kind: 'slow_first_byte', delayMs: 200 });
    const slow = postMessage(sim, 'tok-a');
    await new Promise((r) => setTimeout(r, 50));
    await postMessage(sim, 'tok-b');
    await slow;
    const [first, second] = sim.requests;
    assert.deepEqual([first.seq, first.answeredAfter], [1, 2], 'the slow one answered after the second arrived');
    assert.deepEqual([second.seq, second.answeredAfter], [2, 2]);
  });
});
