/**
 * `report`'s weekly-reset metric (src/routing/weeklyResets.ts) on a log that has one reset:
 * a generated log in which account a, 40 % used, is never served before its weekly reset.
 */
import { strict as assert } from 'node:assert';
import { readDecisionRecord } from '../../src/routing/decisionRead';
import { DEFAULT_POLICY } from '../../src/routing/policy';
import { computeReport, formatReport } from '../../src/routing/report';
import { generateWorkload } from '../../src/whatif/generate';
import { generatedLog, ONE_RESET_SHAPE } from '../support/generatedLog';

const DAY = 86_400_000;

describe('report: weekly resets that expired with unused allowance', () => {
  const { lines } = generatedLog(generateWorkload(ONE_RESET_SHAPE), { ...DEFAULT_POLICY, strategy: 'sequential-drain' });
  const records = lines.map((l) => readDecisionRecord(JSON.parse(l))!);

  it('finds the reset in the recorded snapshots around it, with what it left unused', () => {
    const r = computeReport(records);
    assert.equal(r.weeklyResets.length, 1, 'b resets after the log ends');
    const [reset] = r.weeklyResets;
    assert.equal(reset.account, 'a');
    assert.equal(reset.resetAtMs, ONE_RESET_SHAPE.startMs + DAY);
    assert.ok(Math.abs(reset.unusedFraction - 0.6) < 1e-9, `unused ${reset.unusedFraction}`);
    assert.equal(r.weeklyResetsWithUnused, 1);
    assert.match(
      formatReport(r),
      /weekly resets: 1 \(1 expired with unused allowance, 0\.60 account-weeks unused in all\)\n {2}a: reset 2025-06-03T00:00:00\.000Z, 60\.0% unused\n/,
    );
  });

  it('the same in any order of the records (a log is written in completion order)', () => {
    assert.deepEqual(computeReport([...records].reverse()).weeklyResets, computeReport(records).weeklyResets);
  });

  it('counts the hours with two usable accounts', () => {
    const r = computeReport(records);
    const spanHours = (Date.parse(records[records.length - 1].ts) - Date.parse(records[0].ts)) / 3_600_000;
    assert.equal(r.shareTimeAtMostOneUsable, 0);
    assert.ok(Math.abs(r.hoursAtLeastTwoUsable - spanHours) < 1e-9, `${r.hoursAtLeastTwoUsable} of ${spanHours}`);
    assert.match(formatReport(r), new RegExp(`wall-clock time with ≤ 1 usable account: 0\\.0% \\(${spanHours.toFixed(1)} h with ≥ 2\\)`));
  });
});
