import { strict as assert } from 'node:assert';
import { buildDecisionRecord, metricsFromRecord } from '../../../src/routing/decision';
import { DecisionLineEncoder } from '../../../src/routing/decisionLine';
import { readDecisionRecord } from '../../../src/routing/decisionRead';
import { planRoute, type PlanAccount, type PlanInput } from '../../../src/routing/plan';
import type { RoutingPolicy } from '../../../src/routing/policy';
import { replanOrder } from '../../../src/routing/replay';
import { IDLE_DECAY_MS, SessionWork } from '../../../src/routing/sessionWork';
import { candidateText } from '../../../src/proxy/status/statusView';
import { DAY, HOUR, MIN, NOW, acct, ids, planInput, snap } from '../builders';

/** Exactly known costs: 1,000,000 weighted tokens fill the 5-hour window, 10,000,000 the week. */
const KNOWN = { fiveHour: { fractionPerToken: 1e-6, confidence: 1, samples: 50 }, sevenDay: { fractionPerToken: 1e-7, confidence: 1, samples: 50 } };
/** A session brings 0.1 weighted tokens per ms (360,000 an hour) and works for an hour: 360,000 tokens. */
const RATE = 0.1;
const LIFE = HOUR;
const NEED = RATE * LIFE;

/** An account with its 5-hour and weekly use (fractions) and weekly reset, and what forecast reads of it. */
function account(id: string, index: number, weeklyUsed: number, weeklyResetIn: number, over: Partial<PlanAccount> = {}, sessionUsed = 0.1): PlanAccount {
  return { ...acct(id, index, { snap: snap({ s: { used: sessionUsed, resetIn: 4 * HOUR }, w: { used: weeklyUsed, resetIn: weeklyResetIn } }) }), learnedCosts: KNOWN, ...over };
}

const POLICY: Partial<RoutingPolicy> = { strategy: 'forecast', sessionAffinity: true };

function plan(accounts: PlanAccount[], rest: Partial<PlanInput> = {}, policy: Partial<RoutingPolicy> = {}) {
  return planRoute({ ...planInput(accounts, { ...POLICY, ...policy }), requestId: 'req-1', nowMs: NOW, sessionTokensPerMs: RATE, sessionHorizonMs: LIFE, ...rest });
}

describe('routing/planner: forecast', () => {
  it('a new session goes to the account whose weekly allowance expires soonest while its expected work fits there', () => {
    // a: 5 % of its week left (500,000 tokens), resetting in 2 h; b: most of its week left, resetting in 4 days.
    const a = account('a', 1, 0.95, 2 * HOUR);
    const b = account('b', 0, 0.3, 4 * DAY);
    const p = plan([b, a]);
    assert.deepEqual(ids(p.order), ['a', 'b']);
    assert.equal(p.selectionReason, 'forecast_expiry');
    const fa = p.verdicts[0].forecast!;
    assert.ok(Math.abs(fa.free7d - 500_000) < 1, `free weekly ${fa.free7d}`);
    assert.equal(fa.need7d, NEED);
  });

  it('the soon-expiring account is preferred only as far as the expected work before its reset can use it: bound work there comes first', () => {
    // Two sessions already bound to a bring 0.1 tokens/ms for the next hour: 360,000 of its 500,000 left; a new session's 360,000 does not fit.
    const a = account('a', 1, 0.95, 2 * HOUR, { boundWork: { sessions: 2, tokensPerMs: 0.1 } });
    const b = account('b', 0, 0.3, 4 * DAY);
    const p = plan([b, a]);
    assert.deepEqual(ids(p.order), ['b', 'a']);
    assert.equal(p.selectionReason, 'forecast_fits');
    const loser = p.verdicts[1];
    assert.equal(loser.reason, 'forecast_fits');
    // The record explains it in numbers: 140k free of the week for 360k expected.
    const text = candidateText(loser, metricsFromRecord(buildRecord(p).candidates[1].metrics), NOW);
    assert.match(text, /does not fit before the resets \(5-hour: .* weekly: 140k free for 360k expected\)/);
  });

  it('when no account fits, a week nearly spent days before its reset goes last: its shortfall counts two 5-hour windows kept back', () => {
    // a: 15 % of its week left (1,500,000) resetting in 3 days, 5-hour window 80 % used; b: 5-hour window 85 % used. Neither takes 360,000 in 5 h.
    const a = account('a', 0, 0.85, 3 * DAY, {}, 0.8);
    const b = account('b', 1, 0.3, 5 * DAY, {}, 0.85);
    const p = plan([a, b]);
    assert.deepEqual(ids(p.order), ['b', 'a']);
    assert.equal(p.selectionReason, 'forecast_margin');
    // 6 h before a's reset a quarter of the reserve is left (500,000): its larger 5-hour room puts it first again.
    assert.deepEqual(ids(plan([account('a', 0, 0.85, 6 * HOUR, {}, 0.8), b]).order), ['a', 'b']);
  });

  it("a bound session's expected work fades as it stays idle", () => {
    const work = new SessionWork(2 * HOUR);
    work.served('s', 'a', 1_000, NOW);
    work.served('s', 'a', 1_000, NOW + 10_000);
    const fresh = work.accountWork('a', NOW + 10_000)!.tokensPerMs;
    assert.ok(Math.abs(work.accountWork('a', NOW + 10_000 + IDLE_DECAY_MS)!.tokensPerMs - fresh / Math.E) < 1e-9 * fresh);
    // A turn counts its (new) rate in full again.
    const back = NOW + 20_000 + IDLE_DECAY_MS;
    work.served('s', 'a', 1_000, back);
    assert.ok(Math.abs(work.accountWork('a', back)!.tokensPerMs - work.expectedRate('s')) < 1e-12);
  });

  it('reservations in flight count against the allowance as bound work does', () => {
    const a = account('a', 1, 0.95, 2 * HOUR, { reserved: { inputTokens: 100_000, cacheReadTokens: 0, cacheWriteTokens: 50_000, outputTokens: 10_000 } });
    const b = account('b', 0, 0.3, 4 * DAY);
    assert.deepEqual(ids(plan([b, a]).order), ['b', 'a']);
    assert.deepEqual(ids(plan([b, account('a', 1, 0.95, 2 * HOUR)]).order), ['a', 'b']);
  });

  it('a burst of new sessions spreads: each one placed counts as bound work for the next', () => {
    const work = new SessionWork(HOUR);
    const placed: string[] = [];
    for (let i = 0; i < 6; i++) {
      const at = NOW + i * 5_000;
      const accounts = [account('b', 0, 0.3, 4 * DAY), account('a', 1, 0.6, 10 * HOUR, {}, 0.2), account('c', 2, 0.3, 6 * DAY)].map((x) => ({
        ...x,
        boundWork: work.accountWork(x.id, at),
      }));
      const p = plan(accounts, { nowMs: at, sessionTokensPerMs: work.expectedRate(null), sessionId: `s${i}` });
      placed.push(p.order[0].id);
      work.served(`s${i}`, p.order[0].id, 1_000, at);
    }
    // a (the soonest weekly reset) takes what its 5-hour window can carry — 800,000 tokens free, 360,000 a session — then b, then c.
    assert.deepEqual(placed, ['a', 'a', 'b', 'b', 'c', 'c']);
  });

  it('when no account can take the whole expected work, the one with the smallest shortfall goes first', () => {
    const a = account('a', 0, 0.5, 2 * DAY, {}, 0.9); // 100,000 free in 5 h
    const b = account('b', 1, 0.5, 5 * DAY, {}, 0.8); // 200,000 free
    const p = plan([a, b]);
    assert.deepEqual(ids(p.order), ['b', 'a']);
    assert.equal(p.selectionReason, 'forecast_margin');
  });

  it('a bound session stays on its account: neither a better forecast elsewhere, nor the soft limit, nor a sticky threshold moves it (on-quota)', () => {
    const a = account('a', 0, 0.95, 2 * HOUR);
    const b = account('b', 1, 0.75, 4 * DAY, { boundWork: { sessions: 3, tokensPerMs: 0.3 } }, 0.98);
    // The setting says on-serve with a 70 % weekly sticky threshold: forecast runs on-quota regardless.
    const p = plan([a, b], { binding: { account: 'b', lastServedAtMs: NOW - MIN } }, { sessionAffinityRebind: 'on-serve', stickyThreshold7d: 70 });
    assert.equal(p.order[0].id, 'b');
    assert.equal(p.selectionReason, 'session_affinity');
    // Once b is exhausted, the session moves: quota, not a score, forced it.
    const gone = account('b', 1, 1, 4 * DAY, {}, 1);
    assert.equal(plan([a, gone], { binding: { account: 'b', lastServedAtMs: NOW - MIN } }).order[0].id, 'a');
  });

  it('the decision record keeps what forecast read, so replay plans it again from the record alone', () => {
    const a = account('a', 1, 0.95, 2 * HOUR, { boundWork: { sessions: 2, tokensPerMs: 0.1 } });
    const b = account('b', 0, 0.3, 4 * DAY, { reserved: { inputTokens: 5_000, cacheReadTokens: 40_000, cacheWriteTokens: 0, outputTokens: 800 } });
    const c = account('c', 2, 0.6, 1 * DAY, {}, 0.7);
    const p = plan([b, a, c]);
    const line = new DecisionLineEncoder().encode(buildRecord(p));
    const back = readDecisionRecord(JSON.parse(line))!;
    assert.deepEqual(replanOrder(back), ids(p.order));
    // Without what forecast read, the replay would differ (this test can fail).
    const bare = { ...back, strategyInputs: { ...back.strategyInputs!, accounts: {} } };
    assert.notDeepEqual(replanOrder(bare), ids(p.order));
  });
});

function buildRecord(p: ReturnType<typeof plan>) {
  return buildDecisionRecord(
    {
      ts: new Date(NOW).toISOString(),
      requestId: 'req-1',
      stickyKeySource: 'header',
      stickyKind: 'session',
      stickyKeyHash: '0123456789abcdef',
      path: '/v1/messages',
      model: null,
      stream: true,
    },
    p,
    { ...planInput([], POLICY).policy },
    { servedBy: p.order[0].id, servedByFallback: false, attempts: [], outcome: 'success', status: 200, usage: null, durationMs: 1 },
  );
}
