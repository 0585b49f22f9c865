import { strict as assert } from 'node:assert';
import { latencyFactors, LATENCY_WINDOW_MS, type LatencySample } from '../../../src/routing/planner/latency';
import { planRoute } from '../../../src/routing/plan';
import { NOW, acct, planInput } from '../builders';

/** `n` small-turn samples of `firstTokenMs` (and `rate` tokens/s of sonnet) ending at NOW. */
function samples(n: number, firstTokenMs: number, rate?: number, family = 'sonnet', uncached = 500): LatencySample[] {
  return Array.from({ length: n }, (_, i) => ({ atMs: NOW - i * 1000, firstTokenMs, uncachedInputTokens: uncached, outputTokensPerS: rate, family }));
}

describe('routing/planner: latency weighting', () => {
  it('discounts an account more than 15 % slower than the fleet median, down to half weight at 65 % and beyond', () => {
    const f = latencyFactors(
      new Map([
        ['a', samples(8, 1000)],
        ['b', samples(8, 1000)],
        ['f', samples(8, 1000)],
        ['g', samples(8, 1000)],
        ['c', samples(8, 1100)], // 10 % worse than the median (1000 ms): within tolerance
        ['d', samples(8, 1400)], // 40 % worse → 1 − 0.25
        ['e', samples(8, 5000)], // far worse → the floor
      ]),
      NOW,
      'sonnet',
    );
    assert.equal(f.get('a'), undefined);
    assert.equal(f.get('c'), undefined, 'within 15 % keeps full weight');
    assert.ok(Math.abs(f.get('d')! - 0.75) < 1e-9, `d: ${f.get('d')}`);
    assert.equal(f.get('e'), 0.5, 'never below half weight');
  });

  it('acts only with at least 8 samples on at least 3 accounts', () => {
    const two = latencyFactors(
      new Map([
        ['a', samples(8, 1000)],
        ['b', samples(8, 5000)],
        ['c', samples(7, 1000)],
      ]),
      NOW,
      'sonnet',
    );
    assert.equal(two.size, 0, 'only two accounts have 8 samples');
    const three = latencyFactors(
      new Map([
        ['a', samples(8, 1000)],
        ['b', samples(8, 5000)],
        ['c', samples(8, 1000)],
      ]),
      NOW,
      'sonnet',
    );
    assert.equal(three.get('b'), 0.5);
  });

  it('reads only the last hour, and time to first token only on small turns', () => {
    const old = samples(8, 5000).map((s) => ({ ...s, atMs: s.atMs - LATENCY_WINDOW_MS - 1 }));
    const big = samples(8, 5000, undefined, 'sonnet', 100_000);
    const f = latencyFactors(
      new Map([
        ['a', samples(8, 1000)],
        ['b', [...old, ...big]],
        ['c', samples(8, 1000)],
        ['d', samples(8, 1000)],
      ]),
      NOW,
      'sonnet',
    );
    assert.equal(f.size, 0, 'b has no recent small turn, so nothing is known against it');
  });

  it('compares output rates within the request’s model family only', () => {
    const accounts = new Map([
      ['a', samples(8, 1000, 80)],
      ['b', samples(8, 1000, 40)], // half the fleet's rate on sonnet: 100 % worse
      ['c', samples(8, 1000, 80)],
    ]);
    assert.equal(latencyFactors(accounts, NOW, 'sonnet').get('b'), 0.5);
    assert.equal(latencyFactors(accounts, NOW, 'opus').size, 0, 'no opus samples: rates say nothing');
  });

  it('a slow account is drawn less often by capacity-weighted, but a session bound to it stays', () => {
    const accounts = ['a', 'b', 'c'].map((id, i) => ({ ...acct(id, i), latencyFactor: id === 'b' ? 0.5 : undefined }));
    const plain = ['a', 'b', 'c'].map((id, i) => acct(id, i));
    let slow = 0;
    let even = 0;
    const n = 3000;
    for (let i = 0; i < n; i++) {
      const requestId = `req-${i}`;
      if (planRoute({ ...planInput(accounts, { strategy: 'capacity-weighted' }, { sessionId: null }), requestId, nowMs: NOW }).order[0].id === 'b') slow++;
      if (planRoute({ ...planInput(plain, { strategy: 'capacity-weighted' }, { sessionId: null }), requestId, nowMs: NOW }).order[0].id === 'b') even++;
    }
    // Weights 1 : 0.5 : 1 → b first in 1/5 of draws, against 1/3 without the factor.
    assert.ok(Math.abs(slow / n - 0.2) < 0.03, `b first in ${slow} of ${n}`);
    assert.ok(Math.abs(even / n - 1 / 3) < 0.03, `b first in ${even} of ${n} without the factor`);
    const bound = planRoute({
      ...planInput(accounts, { strategy: 'capacity-weighted', sessionAffinity: true }, { binding: { account: 'b', lastServedAtMs: NOW } }),
      requestId: 'r',
      nowMs: NOW,
    });
    assert.equal(bound.order[0].id, 'b');
    assert.equal(bound.selectionReason, 'session_affinity');
  });

  it('fill-first ignores the factor: its order is the ranking', () => {
    const accounts = ['a', 'b'].map((id, i) => ({ ...acct(id, i), latencyFactor: id === 'a' ? 0.5 : undefined }));
    assert.equal(planRoute({ ...planInput(accounts), requestId: 'r', nowMs: NOW }).order[0].id, 'a');
  });

  it('capacity-weighted: plan size multiplies the weight only when every eligible account has one', () => {
    const first = (accounts: ReturnType<typeof acct>[]) => {
      let big = 0;
      for (let i = 0; i < 2000; i++)
        if (planRoute({ ...planInput(accounts, { strategy: 'capacity-weighted' }, { sessionId: null }), requestId: `r${i}`, nowMs: NOW }).order[0].id === 'max') big++;
      return big / 2000;
    };
    assert.ok(
      Math.abs(
        first([
          { ...acct('max', 0), planSize: 20 },
          { ...acct('pro', 1), planSize: 1 },
        ]) -
          20 / 21,
      ) < 0.02,
      'Max 20x drawn 20 times as often as Pro',
    );
    assert.ok(Math.abs(first([{ ...acct('max', 0), planSize: 20 }, acct('pro', 1)]) - 0.5) < 0.04, 'one size unknown: sizes are not guessed');
  });
});
