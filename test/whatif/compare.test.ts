/**
 * Policies compared on one workload (src/whatif/compare.ts): the calibration's tolerance, the
 * catalogue's names, and the warning when the log's own policy does not reproduce the log.
 */
import { strict as assert } from 'node:assert';
import { readDecisionRecord } from '../../src/routing/decisionRead';
import { DEFAULT_POLICY } from '../../src/routing/policy';
import type { PolicyReport } from '../../src/routing/report';
import { STRATEGY_NAMES } from '../../src/routing/planner/strategies/registry';
import { calibrate, compare } from '../../src/whatif/compare';
import { generateWorkload, WEEK_SHAPE } from '../../src/whatif/generate';
import { catalogueNames, parsePolicyName, withPolicyName } from '../../src/whatif/policies';
import { WorkloadBuilder } from '../../src/whatif/reconstruct';
import { generatedLog } from '../support/generatedLog';

/** A report with these figures (the rest zero). */
function report(switches: number, cacheCreation: number, refused: number): PolicyReport {
  return {
    decisions: 0,
    sessionRequests: 0,
    sessions: 0,
    midSessionSwitches: switches,
    unforcedSwitches: 0,
    switchesPer1000SessionRequests: 0,
    pingPongPairs: 0,
    switchCacheCreationTokens: 0,
    cacheCreationTokens: cacheCreation,
    cacheReadTokens: 0,
    shareTimeAtMostOneUsable: 0,
    hoursAtLeastTwoUsable: 0,
    fallbackShare: 0,
    bySelectionReason: {},
    byOutcome: refused ? { no_usable_account: refused } : {},
    weeklyResets: [],
    weeklyResetsWithUnused: 0,
    unusedWeeklyAllowance: 0,
  };
}

describe('what-if: comparing policies', () => {
  it('calibration allows ±10 % or ±2, whichever is larger', () => {
    const within = (sim: PolicyReport, act: PolicyReport) => calibrate(sim, act).figures.map((f) => f.within);
    assert.deepEqual(within(report(12, 1_100, 0), report(10, 1_000, 2)), [true, true, true]);
    assert.deepEqual(within(report(13, 1_101, 0), report(10, 1_000, 3)), [false, false, false]);
    assert.deepEqual(within(report(110, 0, 0), report(100, 0, 0)), [true, true, true]);
    assert.equal(calibrate(report(111, 0, 0), report(100, 0, 0)).ok, false);
    assert.equal(calibrate(report(1, 0, 0), report(0, 0, 0)).figures[0].error, null, 'no relative error against 0');
  });

  it('--all is every strategy of the catalogue, fill-first under both rankings', () => {
    const names = catalogueNames();
    assert.deepEqual(names.slice(0, 2), ['fill-first:expiry-first', 'fill-first:headroom-first']);
    assert.deepEqual(names.slice(2), STRATEGY_NAMES.slice(1));
    assert.throws(() => parsePolicyName('fill-frist'), /unknown strategy "fill-frist" \(the catalogue: fill-first, round-robin/);
    assert.throws(() => parsePolicyName('fill-first:newest-first'), /unknown ranking "newest-first"/);
  });

  describe('on a generated week', () => {
    const w = generateWorkload({ ...WEEK_SHAPE, days: 3 });
    const recorded = { ...DEFAULT_POLICY, sessionAffinity: true };
    const { lines } = generatedLog(w, recorded);
    const reconstructed = (ls: readonly string[]) => {
      const b = new WorkloadBuilder();
      for (const l of ls) b.add(readDecisionRecord(JSON.parse(l))!);
      return b.finish();
    };

    it('a name equal to the recorded policy is its replay, marked recorded; another policy routes otherwise', () => {
      const rec = reconstructed(lines);
      const named = (n: string) => ({ name: n, policy: withPolicyName(recorded, parsePolicyName(n)) });
      let replays = 0;
      const cmp = compare(rec.workload, rec.actual, [named('fill-first:expiry-first'), named('fill-first:headroom-first')], () => replays++);
      assert.equal(replays, 2, 'the recorded policy is replayed once');
      assert.deepEqual(
        cmp.results.map((r) => [r.name, r.recorded]),
        [
          ['fill-first:expiry-first', true],
          ['fill-first:headroom-first', false],
        ],
      );
      assert.equal(cmp.results[0].report, cmp.recorded.report);
      assert.equal(cmp.recorded.description, 'fill-first:expiry-first, affinity (idle 60 min)');
      assert.notEqual(cmp.results[1].report.cacheCreationTokens, cmp.recorded.report.cacheCreationTokens);
    });

    it('warns when replaying the recorded policy does not reproduce the log (requests refused for a reason the model does not know)', () => {
      // 30 served requests rewritten as refused: the model serves them.
      let n = 0;
      const tampered = lines.map((l) => {
        const r = JSON.parse(l);
        if (r.servedBy === null || n >= 30) return l;
        n++;
        return JSON.stringify({ ...r, servedBy: null, outcome: 'no_usable_account', status: 429, usage: null });
      });
      const rec = reconstructed(tampered);
      const cmp = compare(rec.workload, rec.actual, []);
      const refused = cmp.calibration.figures.find((f) => f.metric === 'refused requests')!;
      assert.deepEqual([refused.simulated, refused.actual, refused.within], [0, 30, false]);
      assert.equal(cmp.calibration.ok, false);
    });
  });
});
