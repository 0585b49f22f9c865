/**
 * Issue 16's live confirmation: `forecast` against both rankings of fill-first (all with session affinity) on the
 * policy workload with short windows (test/support/shortWindows.ts: three accounts whose weeks reset during the run,
 * sessions arriving over it, a burst, throttles), in real time through the real router and the fake upstream.
 * The what-if simulator found the direction on the generated week (test/whatif/forecast.test.ts); this test asserts
 * the part of it that holds live, with margins. The figures, their spread over runs and what does not hold live:
 * docs/policies.md#forecast-live-against-the-fake-upstream. Writes every decision log and report, and a summary
 * (forecast-live.json), to test-artifacts/.
 */
import { strict as assert } from 'node:assert';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { formatReport, type PolicyReport } from '../../src/routing/report';
import { FORECAST_LIVE_POLICIES, runShortWindows, LIVE_IDLE_TTL_MS, SHORT_WINDOWS, type ShortWindowsRun } from '../support/shortWindows';

type Name = 'expiry-first' | 'headroom-first' | 'forecast';
const NAMES: Name[] = ['expiry-first', 'headroom-first', 'forecast'];

const unusedTokens = (r: PolicyReport) => r.weeklyResets.reduce((s, w) => s + (w.unusedTokens ?? 0), 0);
/** Requests not answered: refused by the router or failed. */
const unanswered = (r: PolicyReport) => r.decisions - (r.byOutcome.success ?? 0);

describe('forecast live, against the fake upstream with short windows', function () {
  // Three live runs (one a policy) of about 50 s each.
  this.timeout(400_000);
  const runs = {} as Record<Name, ShortWindowsRun>;

  before(async () => {
    const dir = path.resolve(__dirname, '../../../test-artifacts');
    mkdirSync(dir, { recursive: true });
    const policies = FORECAST_LIVE_POLICIES(LIVE_IDLE_TTL_MS);
    for (const name of NAMES) {
      runs[name] = await runShortWindows(policies[name], SHORT_WINDOWS, path.join(dir, `forecast-live-decisions-${name}.jsonl`));
      writeFileSync(path.join(dir, `forecast-live-report-${name}.txt`), formatReport(runs[name].report));
    }
    const summary = Object.fromEntries(
      NAMES.map((name) => {
        const { report: r, truth, weekSpentMs, wallMs } = runs[name];
        const figures = {
          unusedWeeklyAllowance: r.unusedWeeklyAllowance,
          unusedTokens: unusedTokens(r),
          resets: r.weeklyResets.map((w) => ({ account: w.account, unusedFraction: w.unusedFraction, unusedTokens: w.unusedTokens })),
          truth: truth.map((t) => ({ account: t.account, unusedFraction: Math.max(0, 1 - t.usedBeforeReset) })),
          secondsAtLeastTwoUsable: r.hoursAtLeastTwoUsable * 3600,
          shareTimeAtMostOneUsable: r.shareTimeAtMostOneUsable,
          weekSpentSeconds: weekSpentMs / 1000,
          midSessionSwitches: r.midSessionSwitches,
          unforcedSwitches: r.unforcedSwitches,
          unanswered: unanswered(r),
          sessionRequests: r.sessionRequests,
          wallSeconds: wallMs / 1000,
        };
        return [name, figures];
      }),
    );
    writeFileSync(path.join(dir, 'forecast-live.json'), JSON.stringify(summary, null, 2) + '\n');
  });

  it('serves the same workload under every policy and answers every request', () => {
    const expected = SHORT_WINDOWS.sessions.reduce((s, x) => s + x.turns, 0);
    for (const name of NAMES) {
      const r = runs[name].report;
      assert.equal(r.sessionRequests, expected, `${name}: session requests`);
      assert.equal(unanswered(r), 0, `${name}: ${JSON.stringify(r.byOutcome)}`);
    }
  });

  it('finds every weekly reset of the run in the decision log, with the unused allowance the upstream had left', () => {
    for (const name of NAMES) {
      const { report: r, truth } = runs[name];
      assert.deepEqual(
        r.weeklyResets.map((w) => w.account),
        ['a', 'b', 'c'],
        `${name}: resets`,
      );
      for (const t of truth) {
        const w = r.weeklyResets.find((x) => x.account === t.account)!;
        // The log's last evidence of a week may precede the reset by an answer or two (its tokens missed), or follow
        // the upstream's reading, taken 40 ms before the reset (an answer more): a few thousand tokens of a 10-million week.
        const actual = Math.max(0, 1 - t.usedBeforeReset);
        assert.ok(Math.abs(w.unusedFraction - actual) <= 0.001, `${name} ${t.account}: log ${w.unusedFraction}, upstream ${actual}`);
      }
    }
  });

  it('moves sessions only when quota forces it, under every policy', () => {
    for (const name of NAMES) assert.equal(runs[name].report.unforcedSwitches, 0, `${name}: unforced switches`);
  });

  it('forecast leaves far less weekly allowance unused than headroom-first', () => {
    const f = runs.forecast.report;
    const h = runs['headroom-first'].report;
    // Measured: 0.42–0.46 of headroom-first's in three runs (docs/policies.md); expiry-first leaves none.
    assert.ok(f.unusedWeeklyAllowance <= 0.7 * h.unusedWeeklyAllowance, `${f.unusedWeeklyAllowance} vs ${h.unusedWeeklyAllowance}`);
  });

  it('forecast keeps two accounts usable at least as long as expiry-first, and moves fewer sessions mid-session', () => {
    const f = runs.forecast.report;
    const e = runs['expiry-first'].report;
    assert.ok(f.shareTimeAtMostOneUsable <= e.shareTimeAtMostOneUsable, `${f.shareTimeAtMostOneUsable} vs ${e.shareTimeAtMostOneUsable}`);
    assert.ok(f.midSessionSwitches <= e.midSessionSwitches / 2, `${f.midSessionSwitches} vs ${e.midSessionSwitches}`);
  });
});
