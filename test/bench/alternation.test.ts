import { strict as assert } from 'node:assert';
import { changeVerdicts, roundChanges, type RoundFigures } from '../../bench/alternation';
import { RULE_CELLS, selectCells } from '../../bench/cells';

/** One cell's figures: bare, proxy and baseline with the given per-round CPU µs/request and time-to-completion p50 ms. */
function cell(rounds: { bare: [number, number]; proxy: [number, number]; baseline: [number, number] }[], errors = 0): RoundFigures[] {
  const of = (target: 'bare' | 'proxy' | 'baseline'): RoundFigures => ({
    target,
    errors: target === 'proxy' ? errors : 0,
    cpuUsPerReqRounds: rounds.map((r) => r[target][0]),
    kernelUsPerReqRounds: rounds.map((r) => r[target][0] / 4),
    totalP50Rounds: rounds.map((r) => r[target][1]),
  });
  return [{ target: 'direct', errors: 0, cpuUsPerReqRounds: [] }, of('proxy'), of('bare'), of('baseline')];
}

describe('bench: the regression rule watches every cell (issue 34)', () => {
  it('BENCH_CELLS=rule, and a baseline without BENCH_CELLS, select JSON and SSE at c=1 and c=32 and the 250 KB SSE cell at c=1', () => {
    const expected = ['json/small/c1', 'json/small/c32', 'sse-burst/small/c1', 'sse-burst/small/c32', 'sse-burst/250KB/c1'];
    assert.deepEqual(
      selectCells('rule', false)
        .map((c) => c.id)
        .sort(),
      [...expected].sort(),
    );
    assert.deepEqual(
      selectCells('', true)
        .map((c) => c.id)
        .sort(),
      [...expected].sort(),
    );
    assert.deepEqual([...RULE_CELLS].sort(), [...expected].sort());
    // Without a baseline an empty filter still runs every cell, and a plain string still selects by substring.
    assert.equal(selectCells('', false).length, 18);
    assert.deepEqual(
      selectCells('json/small/c1,sse-1ms/250KB', false).map((c) => c.id),
      ['json/small/c1', 'sse-1ms/250KB/c1', 'sse-1ms/250KB/c32', 'sse-1ms/250KB/c256'],
    );
  });

  it('judges the CPU ratio in every cell with a baseline and the time-to-completion ratio at c=1, each against +0.05', () => {
    const results = new Map([
      // c=1: CPU +0.10 and +0.20 (median +0.15: FAIL); time to completion 1.2 vs 1.2 (PASS).
      [
        'json/small/c1',
        cell([
          { bare: [100, 1], proxy: [150, 1.2], baseline: [140, 1.2] },
          { bare: [200, 2], proxy: [300, 2.4], baseline: [260, 2.4] },
        ]),
      ],
      // c=32: CPU −0.1 (PASS); no time-to-completion line.
      ['json/small/c32', cell([{ bare: [100, 50], proxy: [130, 90], baseline: [140, 60] }])],
      // c=1 where only the time to completion got worse: 1.5 vs 1.2 the bare's.
      ['sse-burst/small/c1', cell([{ bare: [100, 2], proxy: [140, 3], baseline: [140, 2.4] }])],
    ]);
    const lines = changeVerdicts(results).map((v) => `${v.pass ? 'PASS' : 'FAIL'} ${v.text.split(' (')[0]}`);
    assert.deepEqual(lines, [
      'FAIL CPU ratio change ≤ +0.05 against the baseline · json small c=1: +0.15',
      'PASS time-to-completion p50 ratio change ≤ +0.05 against the baseline · json small c=1: +0.00',
      'PASS CPU ratio change ≤ +0.05 against the baseline · json small c=32: -0.10',
      'PASS CPU ratio change ≤ +0.05 against the baseline · sse-burst small c=1: +0.00',
      'FAIL time-to-completion p50 ratio change ≤ +0.05 against the baseline · sse-burst small c=1: +0.30',
    ]);
  });

  it('prints each round difference and the user/kernel split of a CPU change; failed requests make it no verdict', () => {
    const figures = cell([
      { bare: [100, 1], proxy: [150, 1], baseline: [140, 1] },
      { bare: [100, 1], proxy: [120, 1], baseline: [140, 1] },
    ]);
    const [cpu] = changeVerdicts(new Map([['json/small/c32', figures]]));
    assert.match(cpu.text, /rounds' differences \+0\.10\/-0\.20\)/);
    // Kernel time is a quarter of each build's CPU in these figures, so a quarter of each difference.
    assert.match(cpu.text, /of which user mode -0\.04, kernel mode -0\.01$/);
    const broken = changeVerdicts(new Map([['json/small/c32', cell([{ bare: [100, 1], proxy: [100, 1], baseline: [140, 1] }], 3)]]));
    assert.equal(broken[0].pass, false);
    assert.match(broken[0].text, /NOT A VERDICT: failed requests/);
  });

  it('has nothing to judge in a cell run without a baseline', () => {
    const noBaseline = cell([{ bare: [100, 1], proxy: [150, 1], baseline: [140, 1] }]).filter((s) => s.target !== 'baseline');
    assert.equal(roundChanges(noBaseline, 'cpu'), undefined);
    assert.deepEqual(changeVerdicts(new Map([['json/small/c1', noBaseline]])), []);
  });
});
