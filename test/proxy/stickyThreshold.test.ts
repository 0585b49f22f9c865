import { strict as assert } from 'node:assert';
import { callRouter, startHarness, type Harness } from '../support/routerHarness';

describe('sticky reallocation thresholds in the running proxy', () => {
  let h: Harness;
  afterEach(() => h?.close());

  it('moves a bound session off an account over the weekly threshold, and the binding follows it', async () => {
    const spec = [
      { label: 'a', accessToken: 'sk-ant-oat01-test-a', refreshToken: 'sk-ant-ort01-test-a', initialSevenDayUsed: 0.75, sevenDayResetInMs: 2 * 86_400_000 },
      { label: 'b', accessToken: 'sk-ant-oat01-test-b', refreshToken: 'sk-ant-ort01-test-b', initialSevenDayUsed: 0.2, sevenDayResetInMs: 3 * 86_400_000 },
    ];
    h = await startHarness(spec, { routing: { sessionAffinity: true, stickyThreshold7d: 70 } });
    const served: string[] = [];
    for (let i = 0; i < 3; i++) served.push((await callRouter(h, { session: 'conv-1' })).headers['x-claude-router-account']);
    // First: unbound, no quota known yet, a by configured order, bound. Second: a is over 70 %, b is below: moved.
    // Third: the binding moved with it, so the session stays on b by affinity.
    assert.deepEqual(served, ['a', 'b', 'b']);
    await h.router.close();
    const records = h.decisions();
    assert.deepEqual(
      records.map((r) => r.selectionReason),
      ['insertion_order', 'sticky_reallocation', 'session_affinity'],
    );
    assert.equal(records[1].affinity.skippedReason, 'over_sticky_threshold');
    const a = records[1].candidates.find((c) => c.account === 'a')!;
    assert.equal(a.filter?.code, 'over_sticky_threshold');
  });
});
