/**
 * The virtual-time replay (src/whatif/simulate.ts) on workloads whose answers are known by
 * construction: the real planner over the sim's windows and prompt cache.
 */
import { strict as assert } from 'node:assert';
import type { DecisionRecord } from '../../src/routing/decision';
import { simulate, type SimPolicy } from '../../src/whatif/simulate';
import type { Workload } from '../../src/whatif/workload';
import { account, DAY, HOUR, MIN, policy, request, SEC, session, T0, workload } from './workloads';

/** The replay's report and its decisions. */
function run(w: Workload, p: SimPolicy = policy()) {
  const decisions: DecisionRecord[] = [];
  const { report } = simulate(w, p, { onDecision: (d) => decisions.push(d) });
  return { report, decisions, servedBy: decisions.map((d) => d.servedBy) };
}

describe('what-if replay in virtual time', () => {
  it('one session on one account under fill-first never switches, and reads back what it cached', () => {
    const { report, servedBy, decisions } = run(workload([account('a', 0), account('b', 1)], session('s1', 50, 30 * SEC)));
    assert.deepEqual(new Set(servedBy), new Set(['a']), 'a (weekly reset first) serves every turn');
    assert.equal(report.midSessionSwitches, 0);
    // Turn 0 writes its prefix (10,000 − 500); each later turn reads the previous prompt and writes its growth less its tail.
    assert.equal(report.cacheCreationTokens, 9_500 + 49 * 500);
    assert.equal(decisions[1].usage!.cacheReadInputTokens, 10_000);
    assert.equal(report.sessions, 1);
  });

  it('an auxiliary request (recorded class auxiliary or compaction) is served but never binds its session, as live', () => {
    const accounts = [account('a', 0), account('b', 1)];
    const run2 = (auxiliary: boolean) => run(workload(accounts, [request(0, 's1', { auxiliary }), request(MIN, 's1')]), policy({ sessionAffinity: true })).decisions;
    const [aux, next] = run2(true);
    assert.equal(aux.servedBy, 'a');
    assert.equal(next.affinity.sessionBound, false, 'the auxiliary request left no binding');
    assert.equal(run2(false)[1].affinity.sessionBound, true, 'a turn binds');
  });

  it('two accounts whose 5-hour windows are small run dry under expiry-first: the rest is refused until a window resets', () => {
    const small = { fiveHourLimitTokens: 10_000 };
    // No session (no cache): each request counts its whole prompt and output, 900 + 100 tokens.
    const reqs = Array.from({ length: 25 }, (_, i) => request(i * MIN, null, { promptTokens: 900, tailTokens: 900, outputTokens: 100 }));
    reqs.push(request(5 * HOUR + 5 * MIN, null, { promptTokens: 900, tailTokens: 900, outputTokens: 100 }));
    const { report, servedBy } = run(workload([account('a', 0, small), account('b', 1, small)], reqs));
    assert.deepEqual(servedBy, [...Array(10).fill('a'), ...Array(10).fill('b'), ...Array(5).fill(null), 'a']);
    assert.equal(report.byOutcome.no_usable_account, 5);
    assert.ok(report.shareTimeAtMostOneUsable > 0.9, `≤ 1 usable account most of the span: ${report.shareTimeAtMostOneUsable}`);
  });

  it('a recorded throttle strikes the same account at the same time: the session moves away and, without affinity, back', () => {
    const w = workload([account('a', 0), account('b', 1)], session('s1', 12, 10 * SEC), {
      faults: [{ account: 'a', atMs: T0 + 50 * SEC, kind: 'throttle', answerMs: 0, cooldownMs: 30 * SEC }],
    });
    const plain = run(w);
    // Throttled at 50 s, a cools until 80 s: the turns at 50, 60 and 70 s go to b.
    assert.deepEqual(plain.servedBy, ['a', 'a', 'a', 'a', 'a', 'b', 'b', 'b', 'a', 'a', 'a', 'a']);
    assert.deepEqual(
      plain.decisions[5].attempts.map((a) => [a.account, a.result]),
      [
        ['a', 'throttle'],
        ['b', 'success'],
      ],
    );
    assert.equal(plain.report.midSessionSwitches, 2);
    assert.equal(plain.report.pingPongPairs, 1);
    // On b the whole prefix is written (15,000 − 500); back on a, 40 s after its last use, a reads what it cached at 40 s (14,000).
    assert.equal(plain.decisions[8].usage!.cacheReadInputTokens, 14_000);
    assert.equal(plain.report.switchCacheCreationTokens, 14_500 + (18_000 - 500 - 14_000));

    const sticky = run(w, policy({ sessionAffinity: true }));
    assert.deepEqual(sticky.servedBy, ['a', 'a', 'a', 'a', 'a', 'b', 'b', 'b', 'b', 'b', 'b', 'b'], 'with affinity the session stays where it was served');
    assert.equal(sticky.report.midSessionSwitches, 1);
    assert.equal(sticky.report.pingPongPairs, 0);
  });

  it('a throttle on an account the policy does not use at that time changes nothing', () => {
    const w = workload([account('a', 0), account('b', 1)], session('s1', 12, 10 * SEC), {
      faults: [{ account: 'b', atMs: T0 + 50 * SEC, kind: 'throttle', answerMs: 0, cooldownMs: 30 * SEC }],
    });
    assert.deepEqual(new Set(run(w).servedBy), new Set(['a']));
  });

  it("the router sees an account's tokens only when the answer's head arrives: a request planned before it still finds room", () => {
    const nearlyFull = { fiveHourLimitTokens: 10_000, fiveHour: { used: 0.95, resetAtMs: T0 + HOUR } };
    const reqs = [request(0, 'x', { promptTokens: 200, tailTokens: 200, outputTokens: 100, headMs: 5 * SEC, durationMs: 6 * SEC }), request(1 * SEC, 'y')];
    const w = (lagged: typeof reqs) => workload([account('a', 0, nearlyFull), account('b', 1)], lagged);
    // x takes a to 98 %, past the 97 % soft limit; y, planned 1 s later, sees it only if x's head is in.
    assert.deepEqual(run(w(reqs)).servedBy, ['a', 'a']);
    assert.deepEqual(run(w([{ ...reqs[0], headMs: 0 }, reqs[1]])).servedBy, ['a', 'b']);
  });

  it("a throttle cools its account from the 429's arrival: a request planned before it still goes there", () => {
    const w = workload([account('a', 0), account('b', 1)], [request(50 * SEC, 'x'), request(51 * SEC, 'y'), request(53 * SEC, 'z')], {
      faults: [{ account: 'a', atMs: T0 + 50 * SEC, kind: 'throttle', answerMs: 2 * SEC, cooldownMs: 30 * SEC }],
    });
    assert.deepEqual(run(w).servedBy, ['b', 'a', 'b']);
  });

  it('the prompt cache expires: a pause longer than its lifetime turns the next read into a write', () => {
    const reqs = [...session('s1', 3, 30 * SEC), request(60 * SEC + 6 * MIN, 's1', { promptTokens: 13_000, tailTokens: 500 })];
    const short = run(workload([account('a', 0)], reqs));
    assert.equal(short.decisions[3].usage!.cacheReadInputTokens, 0);
    assert.equal(short.decisions[3].usage!.cacheCreationInputTokens, 12_500);
    const long = run(workload([account('a', 0)], reqs, { cacheTtlMs: HOUR }));
    assert.equal(long.decisions[3].usage!.cacheReadInputTokens, 12_000);
    assert.equal(long.decisions[3].usage!.cacheCreationInputTokens, 500);
  });

  it('requests still in flight count: spill sends a second simultaneous request to the next account', () => {
    const reqs = [request(0, 'x', { durationMs: 10 * SEC }), request(1 * SEC, 'y', { durationMs: 10 * SEC }), request(20 * SEC, 'z')];
    const { servedBy, decisions } = run(workload([account('a', 0), account('b', 1)], reqs), policy({ spillInflight: 1 }));
    assert.deepEqual(servedBy, ['a', 'b', 'a']);
    assert.equal(decisions[1].selectionReason, 'spill_inflight');
    assert.deepEqual(decisions[1].spill, { from: 'a', to: 'b', inflight: 1 });
  });

  it('a weekly window that resets reports the allowance it left unused; the next window follows the schedule', () => {
    const a = account('a', 0, {
      sevenDayLimitTokens: 1_000_000,
      sevenDay: { used: 0.3, resetAtMs: T0 + HOUR },
      weeklyResetSchedule: [T0 + HOUR + 7 * DAY],
    });
    const reqs = [request(0, null, { promptTokens: 900, tailTokens: 900 }), request(2 * HOUR, null, { promptTokens: 900, tailTokens: 900 })];
    const { report, decisions } = run(workload([a], reqs));
    assert.equal(report.weeklyResets.length, 1);
    const [r] = report.weeklyResets;
    assert.equal(r.account, 'a');
    assert.equal(r.resetAtMs, T0 + HOUR);
    assert.ok(Math.abs(r.usedFraction - 0.301) < 1e-12);
    assert.ok(Math.abs(r.unusedTokens! - 699_000) < 1e-6);
    assert.equal(report.weeklyResetsWithUnused, 1);
    assert.equal(decisions[1].candidates[0].metrics.weeklyResetMs, T0 + HOUR + 7 * DAY, 'the new window resets on the schedule');
    assert.ok(Math.abs(decisions[1].candidates[0].metrics.weeklyUsed! - 0) < 1e-12);
  });

  it('usable accounts are counted over the plan, as the decision record counts them: single-account offers one', () => {
    const w = workload([account('a', 0), account('b', 1)], session('s1', 10, 10 * SEC));
    assert.equal(run(w).report.shareTimeAtMostOneUsable, 0);
    assert.equal(run(w, policy({ strategy: 'single-account' })).report.shareTimeAtMostOneUsable, 1);
  });

  it('the same workload and policy give the same result (draw-based strategies are seeded by the request id)', () => {
    const w = workload([account('a', 0), account('b', 1), account('c', 2)], [...session('s1', 20, 10 * SEC), ...session('s2', 20, 10 * SEC, { startAt: 5 * SEC })]);
    const p = policy({ strategy: 'capacity-weighted' });
    assert.deepEqual(run(w, p).servedBy, run(w, p).servedBy);
    assert.ok(new Set(run(w, p).servedBy).size > 1, 'the draw spreads requests');
  });
});
