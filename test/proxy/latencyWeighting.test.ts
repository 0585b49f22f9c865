import { strict as assert } from 'node:assert';
import { replayDecisions } from '../../src/routing/replay';
import { accounts, callRouter, messagesBody, routerStatus, startHarness, type Harness } from '../support/routerHarness';

describe('latency weighting and the error rate in the running proxy', () => {
  let h: Harness;
  afterEach(() => h?.close());

  it('an account whose turns start slowly gets a smaller draw weight, on record and reproducible by replay', async () => {
    h = await startHarness(accounts('a', 'b', 'c'), { routing: { strategy: 'capacity-weighted' } });
    // 400 ms: still more than 65 % slower than a and c when a loaded machine slows every turn to 600 ms.
    h.sim.injectFault('b', { kind: 'slow_first_byte', delayMs: 400 }, 1000);
    const served = new Map<string, number>();
    const body = messagesBody({ stream: true });
    // Draws spread the requests; go on until every account has the 8 samples the weighting needs.
    for (let round = 0; round < 40 && !['a', 'b', 'c'].every((l) => (served.get(l) ?? 0) >= 8); round++) {
      const answers = await Promise.all(Array.from({ length: 4 }, () => callRouter(h, { body })));
      for (const r of answers) {
        assert.equal(r.status, 200);
        const l = r.headers['x-claude-router-account'];
        served.set(l, (served.get(l) ?? 0) + 1);
      }
    }
    const st = await routerStatus(h);
    const factor = (l: string) => st.accounts.find((a: { label: string }) => a.label === l).latencyFactor;
    assert.equal(factor('b'), 0.5, 'b answered 400 ms later than a and c on every turn');
    assert.equal(factor('a'), 1);
    assert.equal(factor('c'), 1);
    await callRouter(h, { body });
    await h.router.close();
    const records = h.decisions();
    assert.equal(records[records.length - 1].strategyInputs?.accounts.b?.latencyFactor, 0.5, 'the record holds what the draw read');
    const replay = replayDecisions(records, 'expiry-first');
    assert.equal(replay.compared, records.length);
    assert.deepEqual(replay.differences, []);
  });

  it("an account's failed attempts show as its recent error rate", async () => {
    h = await startHarness(accounts('a', 'b'));
    assert.equal((await callRouter(h, {})).headers['x-claude-router-account'], 'a');
    h.sim.injectFault('a', { kind: 'server_error', status: 500 });
    const second = await callRouter(h, {});
    assert.equal(second.status, 200);
    assert.equal(second.headers['x-claude-router-account'], 'b', 'served by the other account');
    const st = await routerStatus(h);
    const rate = (l: string) => st.accounts.find((a: { label: string }) => a.label === l).recentErrorRate;
    assert.equal(rate('a'), 1 / 2, 'one of its two attempts failed');
    assert.equal(rate('b'), 0);
  });
});
