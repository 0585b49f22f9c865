/**
 * `forecast` judged in virtual time on the generated week (src/whatif/generate.ts, WEEK_SHAPE:
 * three accounts with staggered weekly resets and limited allowances, sessions of varied length,
 * bursts, throttles) against both rankings of fill-first, all with affinity. The figures and what
 * they mean: docs/policies.md#forecast-on-the-generated-week.
 */
import { strict as assert } from 'node:assert';
import { DEFAULT_POLICY, type RoutingPolicy } from '../../src/routing/policy';
import type { PolicyReport } from '../../src/routing/report';
import { refusedOf } from '../../src/whatif/compare';
import { generateWorkload, WEEK_SHAPE } from '../../src/whatif/generate';
import { catalogueNames } from '../../src/whatif/policies';
import { simulate } from '../../src/whatif/simulate';

const runOf = (w: ReturnType<typeof generateWorkload>) => (over: Partial<RoutingPolicy>) =>
  simulate(w, { name: over.strategy ?? '', policy: { ...DEFAULT_POLICY, sessionAffinity: true, ...over } }).report;

// Seed 1 is the judged week; seed 3 another one that meets the same bar (docs/policies.md: seeds 2 and 4–6 still miss it, by how much is there).
for (const seed of [1, 3]) {
  describe(`whatif: forecast on the generated week (seed ${seed})`, function () {
    this.timeout(60_000);
    const w = generateWorkload({ ...WEEK_SHAPE, seed });
    let expiry: PolicyReport;
    let headroom: PolicyReport;
    let forecast: PolicyReport;
    before(() => {
      const run = runOf(w);
      expiry = run({ strategy: 'fill-first', accountRanking: 'expiry-first' });
      headroom = run({ strategy: 'fill-first', accountRanking: 'headroom-first' });
      forecast = run({ strategy: 'forecast' });
    });

    it('moves no more sessions mid-session than either ranking', () => {
      assert.ok(
        forecast.midSessionSwitches <= Math.min(expiry.midSessionSwitches, headroom.midSessionSwitches),
        `${forecast.midSessionSwitches} vs ${expiry.midSessionSwitches} / ${headroom.midSessionSwitches}`,
      );
      assert.equal(forecast.unforcedSwitches, 0);
    });

    it("wastes at most 1 point of weekly allowance more than expiry-first and keeps two accounts usable as long as headroom-first (the issue's bar)", () => {
      assert.ok(forecast.unusedWeeklyAllowance <= expiry.unusedWeeklyAllowance + 0.01, `${forecast.unusedWeeklyAllowance} vs ${expiry.unusedWeeklyAllowance}`);
      assert.ok(forecast.hoursAtLeastTwoUsable >= headroom.hoursAtLeastTwoUsable, `${forecast.hoursAtLeastTwoUsable} vs ${headroom.hoursAtLeastTwoUsable}`);
    });

    it('refuses no more requests than either ranking', () => {
      assert.ok(refusedOf(forecast) <= Math.min(refusedOf(expiry), refusedOf(headroom)), `${refusedOf(forecast)} vs ${refusedOf(expiry)} / ${refusedOf(headroom)}`);
    });
  });
}

describe('whatif: forecast in the catalogue', () => {
  it('is in the catalogue `simulate --all` compares', () => {
    assert.ok(catalogueNames().includes('forecast'));
  });
});
