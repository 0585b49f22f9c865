import { strict as assert } from 'node:assert';
import { RouterState } from '../../../src/proxy/state/routerState';
import type { QuotaSnapshot } from '../../../src/quota/types';

const T0 = Date.UTC(2025, 5, 2, 8);
const HOUR = 3_600_000;
const snapshot = (used5: number, used7: number, at: number): QuotaSnapshot => ({
  observedAtMs: at,
  source: 'headers',
  session: { utilization: used5, resetAtMs: T0 + 5 * 3_600_000 },
  weekly: { utilization: used7, resetAtMs: T0 + 5 * 86_400_000 },
  scoped: {},
});

describe('proxy/state: learned costs live in the router state', () => {
  it('are fed by the evidence and the usage served, saved with the state and restored by a new router', () => {
    const state = new RouterState(3_600_000);
    // 100,000 weighted tokens a step: the 5-hour window rises 2 points (5,000,000 fill it), the week 0.1 (100,000,000).
    for (let i = 0; i < 40; i++) {
      const at = T0 + i * 60_000;
      state.recordEvidence('a', snapshot(0.02 * i, 0.3 + 0.001 * i, at), at);
      state.recordServed('a', 'sess', { inputTokens: 60_000, cacheReadTokens: 100_000, cacheWriteTokens: 20_000, outputTokens: 10_000 }, 'sonnet', at + 1_000);
    }
    const five = state.learnedCosts.window('a', '5h')!;
    assert.ok(Math.abs(five.fractionPerToken * 5_000_000 - 1) < 0.01, `${1 / five.fractionPerToken} tokens fill the 5-hour window`);
    assert.equal(state.sessionWork.accountWork('a', T0 + 40 * 60_000)?.sessions, 1);

    const restored = new RouterState(3_600_000);
    assert.ok(restored.restore(JSON.parse(JSON.stringify(state.toSaved(T0 + HOUR))), T0 + HOUR));
    assert.deepEqual(restored.learnedCosts.costs('a'), state.learnedCosts.costs('a'));
  });

  it('a state file of an older version (no learned costs) restores, with nothing learned', () => {
    const state = new RouterState(3_600_000);
    const saved = state.toSaved(T0);
    delete saved.learnedCosts;
    assert.ok(state.restore(saved, T0));
    assert.equal(state.learnedCosts.costs('a'), undefined);
  });
});
