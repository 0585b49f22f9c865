/**
 * A decision log → the workload it records (src/whatif/reconstruct.ts): on logs a policy wrote
 * for a generated workload, whose allowances, quota state, throttles and outcomes are known, and
 * the calibration of replaying the log's own policy against it.
 */
import { strict as assert } from 'node:assert';
import type { DecisionRecord } from '../../src/routing/decision';
import { readDecisionRecord } from '../../src/routing/decisionRead';
import { DEFAULT_POLICY, type RoutingPolicy } from '../../src/routing/policy';
import { compare } from '../../src/whatif/compare';
import { generateWorkload, WEEK_SHAPE, type WorkloadShape } from '../../src/whatif/generate';
import { WorkloadBuilder, type Reconstruction } from '../../src/whatif/reconstruct';
import type { Workload } from '../../src/whatif/workload';
import { generatedLog } from '../support/generatedLog';
import { DAY, MIN } from './workloads';

/** Two days of the week shape, with throttles every hour or two that last minutes. */
const SHAPE: WorkloadShape = { ...WEEK_SHAPE, seed: 7, days: 2, sessionsPerDay: 25, throttlesPerDay: 12, throttleMs: [60_000, 300_000] };
const AFFINITY: RoutingPolicy = { ...DEFAULT_POLICY, sessionAffinity: true };

function reconstruct(lines: readonly string[]): Reconstruction {
  const b = new WorkloadBuilder();
  // A log is written in completion order; the builder takes any order.
  for (const l of [...lines].reverse()) b.add(readDecisionRecord(JSON.parse(l))!);
  return b.finish();
}

const close = (a: number, b: number, rel = 1e-9) => Math.abs(a - b) <= rel * Math.max(1, Math.abs(b));

describe('what-if: reconstructing the workload of a decision log', () => {
  let truth: Workload;
  let lines: string[];
  let rec: Reconstruction;
  let written: ReturnType<typeof generatedLog>['result'];
  before(() => {
    truth = generateWorkload(SHAPE);
    ({ lines, result: written } = generatedLog(truth, AFFINITY));
    rec = reconstruct(lines);
  });

  it('reads every request with its arrival, session, model and prompt shape', () => {
    const w = rec.workload;
    assert.equal(w.requests.length, truth.requests.length);
    assert.equal(rec.stats.requests, truth.requests.length);
    const served = w.requests.filter((r) => !r.usageEstimated);
    for (const r of served.slice(0, 200)) {
      const t = truth.requests.find((x) => x.requestId === r.requestId)!;
      assert.deepEqual(
        [r.atMs, r.session, r.model, r.promptTokens, r.tailTokens, r.outputTokens, r.durationMs],
        [t.atMs, t.session, t.model, t.promptTokens, t.tailTokens, t.outputTokens, t.durationMs],
      );
    }
  });

  it('carries which requests are auxiliary (class auxiliary or compaction); a line without a class is a turn', () => {
    const marked = lines.map((l, i) => {
      const r = JSON.parse(l) as DecisionRecord;
      if (r.path !== '/v1/messages') return l;
      if (i % 3 === 0) delete r.requestClass;
      else r.requestClass = i % 3 === 1 ? 'auxiliary' : 'compaction';
      return JSON.stringify(r);
    });
    const byId = new Map(marked.map((l) => JSON.parse(l) as DecisionRecord).map((r) => [r.requestId, r.requestClass]));
    for (const q of reconstruct(marked).workload.requests) {
      const cls = byId.get(q.requestId);
      assert.equal(q.auxiliary, cls === 'auxiliary' || cls === 'compaction' ? true : undefined, `${q.requestId}: ${cls}`);
    }
  });

  it("infers each account's allowance from how its utilisation moved against the tokens it served", () => {
    for (const given of truth.accounts) {
      const a = rec.workload.accounts.find((x) => x.label === given.label)!;
      assert.equal(a.allowanceSource, 'inferred', a.label);
      assert.ok(close(a.fiveHourLimitTokens, given.fiveHourLimitTokens), `${a.label} 5h ${a.fiveHourLimitTokens} vs ${given.fiveHourLimitTokens}`);
      assert.ok(close(a.sevenDayLimitTokens, given.sevenDayLimitTokens), `${a.label} 7d ${a.sevenDayLimitTokens} vs ${given.sevenDayLimitTokens}`);
      assert.ok(close(a.sevenDay.used, given.sevenDay.used), `${a.label} weekly use at the start`);
      assert.equal(a.sevenDay.resetAtMs, given.sevenDay.resetAtMs);
    }
  });

  it('finds each throttle the log met, on its account at its time, with the cooldown a later decision saw', () => {
    const met = rec.workload.faults;
    assert.ok(met.length >= 2, `throttles in the log: ${met.length}`);
    const records = lines.map((l) => readDecisionRecord(JSON.parse(l))!);
    let seen = 0;
    for (const f of met) {
      const t = truth.faults.find((x) => x.account === f.account && f.atMs >= x.atMs && f.atMs < x.atMs + x.cooldownMs);
      assert.ok(t, `a throttle of the workload struck ${f.account} at ${f.atMs}`);
      assert.equal(f.kind, 'throttle');
      const sawIt = records.some((r) => Date.parse(r.ts) > f.atMs && r.candidates.some((c) => c.account === f.account && c.metrics.coolingUntilMs === f.atMs + t.cooldownMs));
      // Unseen, a throttle without retry-after cools for the router's default, 10 s.
      assert.equal(f.cooldownMs, sawIt ? t.cooldownMs : 10_000);
      if (sawIt) seen++;
    }
    assert.ok(seen > 0, 'some throttle was seen by a later decision');
  });

  it("replaying the log's own policy reproduces what it recorded exactly: its calibration is within tolerance with no error", () => {
    const cmp = compare(rec.workload, rec.actual, []);
    assert.deepEqual(
      cmp.calibration.figures.map((f) => [f.metric, f.simulated - f.actual]),
      [
        ['mid-session switches', 0],
        ['cache-creation tokens', 0],
        ['refused requests', 0],
      ],
    );
    assert.ok(cmp.calibration.ok);
    // The same report as the run that wrote the log (fractions up to float rounding: the allowances are inferred).
    const sim = cmp.recorded.report;
    const log = written.report;
    const counts = (r: typeof sim) => [
      r.decisions,
      r.sessions,
      r.midSessionSwitches,
      r.pingPongPairs,
      r.cacheCreationTokens,
      r.cacheReadTokens,
      r.byOutcome,
      r.bySelectionReason,
      r.weeklyResets.length,
    ];
    assert.deepEqual(counts(sim), counts(log));
    assert.ok(close(sim.unusedWeeklyAllowance, log.unusedWeeklyAllowance), `${sim.unusedWeeklyAllowance} vs ${log.unusedWeeklyAllowance}`);
    assert.equal(rec.actual.midSessionSwitches, written.report.midSessionSwitches);
  });

  it('a request the log refused takes its tokens from its session', () => {
    // a alone serves (single-account), and runs dry.
    const shape: WorkloadShape = { ...SHAPE, days: 1, accounts: [{ label: 'a', fiveHourLimitTokens: 300_000, sevenDayLimitTokens: 3_000_000, sevenDayResetInMs: 3 * DAY }] };
    const r = reconstruct(generatedLog(generateWorkload(shape), { ...DEFAULT_POLICY, strategy: 'single-account' }).lines);
    const refused = r.actual.byOutcome.no_usable_account;
    assert.ok(refused > 0, 'the log has refused requests');
    assert.equal(r.stats.usageEstimated, refused);
    const estimated = r.workload.requests.filter((q) => q.usageEstimated);
    assert.equal(estimated.length, refused);
    assert.ok(estimated.every((q) => q.promptTokens > 0));
  });

  it('an account that never served gets the median allowance of those that did', () => {
    // sequential-drain never leaves a, whose allowance is large.
    const shape: WorkloadShape = {
      ...SHAPE,
      days: 1,
      accounts: [
        { label: 'a', fiveHourLimitTokens: 3_000_000, sevenDayLimitTokens: 30_000_000, sevenDayResetInMs: 3 * DAY },
        { label: 'b', fiveHourLimitTokens: 1_000, sevenDayLimitTokens: 1_000, sevenDayResetInMs: 4 * DAY },
      ],
      throttlesPerDay: 0,
    };
    const r = reconstruct(generatedLog(generateWorkload(shape), { ...DEFAULT_POLICY, strategy: 'sequential-drain' }).lines);
    const b = r.workload.accounts.find((x) => x.label === 'b')!;
    assert.equal(b.allowanceSource, 'assumed');
    assert.ok(close(b.fiveHourLimitTokens, 3_000_000), `b takes a's 5h allowance: ${b.fiveHourLimitTokens}`);
    assert.equal(r.workload.accounts.find((x) => x.label === 'a')!.allowanceSource, 'inferred');
  });

  it('infers a 1-hour prompt cache when a session read its cache after a longer pause than 5 minutes', () => {
    const slow: WorkloadShape = { ...SHAPE, days: 1, thinkMs: [12 * MIN, 12 * MIN], throttlesPerDay: 0 };
    const w = { ...generateWorkload(slow), cacheTtlMs: 60 * MIN };
    assert.equal(reconstruct(generatedLog(w, AFFINITY).lines).workload.cacheTtlMs, 60 * MIN);
    assert.equal(rec.workload.cacheTtlMs, 5 * MIN, 'the 2-day log never paused that long with a read');
  });

  it('refuses a log without Messages requests, and a record it cannot read, taking nothing of it', () => {
    assert.throws(() => new WorkloadBuilder().finish(), /no \/v1\/messages request/);
    const b = new WorkloadBuilder();
    const good = readDecisionRecord(JSON.parse(lines[0]))!;
    assert.throws(() => b.add({ ...good, candidates: undefined } as unknown as DecisionRecord), /no path, policy or candidates/);
    assert.throws(() => b.add({ ...good, ts: 'yesterday' }), /unreadable time/);
    b.add(good);
    assert.equal(b.finish().stats.records, 1);
  });
});
