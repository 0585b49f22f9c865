import { strict as assert } from 'node:assert';
import { buildDecisionRecord } from '../../../src/routing/decision';
import { DecisionLineEncoder } from '../../../src/routing/decisionLine';
import { planRoute } from '../../../src/routing/plan';
import { filterAccount } from '../../../src/routing/planner/filter';
import { clockTime, lossText, verdictText, type FilterVerdict } from '../../../src/routing/planner/verdict';
import { DEFAULT_POLICY } from '../../../src/routing/policy';
import { candidateText } from '../../../src/proxy/status/statusView';
import { DAY, HOUR, MIN, NOW, SEC, acct, planInput, snap } from '../builders';

const OUT = { servedBy: null, servedByFallback: false, attempts: [], outcome: 'success' as const, status: 200, usage: null, durationMs: 1 };
const REQ = {
  ts: new Date(NOW).toISOString(),
  requestId: 'req_1',
  stickyKeySource: 'none' as const,
  stickyKind: 'none' as const,
  stickyKeyHash: null,
  path: '/v1/messages',
  model: 'claude-opus-4',
  stream: true,
};

describe('routing/planner: filter verdicts', () => {
  it('names each reason an account is not eligible, with its figures', () => {
    const p = DEFAULT_POLICY;
    assert.deepEqual(filterAccount(acct('a', 0), p, undefined), { code: 'eligible' });
    assert.deepEqual(filterAccount(acct('a', 0, { needsSignIn: true }), p, undefined), { code: 'needs_sign_in' });
    assert.deepEqual(filterAccount({ ...acct('a', 0, { coolIn: 27 * SEC }), cooldownReason: 'throttle' }, p, undefined), {
      code: 'cooling',
      reason: 'throttle',
      untilMs: NOW + 27 * SEC,
    });
    assert.deepEqual(filterAccount(acct('a', 0, { snap: snap({ s: { used: 1, resetIn: 2 * HOUR } }) }), p, undefined), {
      code: 'window_exhausted',
      window: '5h',
      resetMs: NOW + 2 * HOUR,
    });
    assert.deepEqual(filterAccount(acct('a', 0, { snap: snap({ w: { used: 1, resetIn: DAY } }) }), p, undefined), { code: 'window_exhausted', window: '7d', resetMs: NOW + DAY });
    const scoped = acct('a', 0, { family: 'opus', snap: snap({ scoped: { opus: { used: 1, resetIn: 3 * DAY } } }) });
    assert.deepEqual(filterAccount(scoped, p, 'opus'), { code: 'scoped_exhausted', family: 'opus', resetMs: NOW + 3 * DAY });
    assert.deepEqual(filterAccount(acct('a', 0, { snap: snap({ s: { used: 0.98, resetIn: HOUR } }) }), p, undefined), { code: 'soft_limit', used: 0.98, resetMs: NOW + HOUR });
    assert.deepEqual(filterAccount(acct('a', 0, { inflight: 4 }), { ...p, maxInflightPerAccount: 4 }, undefined), { code: 'over_cap', inflight: 4, cap: 4 });
  });

  it('builds the words only when read, at the reading time', () => {
    assert.equal(verdictText({ code: 'cooling', reason: 'throttle', untilMs: NOW + 27 * SEC }, NOW), 'cooling — throttled, 27 s remaining');
    assert.equal(verdictText({ code: 'cooling', reason: 'throttle', untilMs: NOW + 27 * SEC }, NOW + 20 * SEC), 'cooling — throttled, 7 s remaining');
    assert.equal(verdictText({ code: 'window_exhausted', window: '5h', resetMs: NOW + HOUR }, NOW), `5-hour window exhausted — resets ${clockTime(NOW + HOUR, NOW)}`);
    assert.match(clockTime(NOW + HOUR, NOW), /^\d\d:\d\d$/);
    assert.match(clockTime(NOW + 3 * DAY, NOW), /^[A-Z][a-z]{2} \d\d:\d\d$/);
    assert.equal(verdictText({ code: 'scoped_exhausted', family: 'opus', resetMs: null }, NOW), 'weekly window for opus exhausted — resets unknown');
    const all: FilterVerdict[] = [
      { code: 'eligible' },
      { code: 'needs_sign_in' },
      { code: 'disabled' },
      { code: 'over_cap', inflight: 2, cap: 2 },
      { code: 'soft_limit', used: 0.975, resetMs: NOW + MIN },
    ];
    assert.deepEqual(
      all.map((v) => verdictText(v, NOW)),
      ['eligible', 'needs sign-in', 'disabled', 'at its in-flight cap (2 of 2)', `5-hour window at 98 % (soft limit) — resets ${clockTime(NOW + MIN, NOW)}`],
    );
  });
});

describe('routing/planner: no loser carries the winner reason', () => {
  // Weekly resets: a in 1 day, b in 3 days, c in 5 days → expiry-first picks a (weekly_reset).
  const accounts = [
    acct('a', 0, { snap: snap({ w: { used: 0.3, resetIn: DAY } }) }),
    acct('b', 1, { snap: snap({ w: { used: 0.3, resetIn: 3 * DAY } }) }),
    acct('c', 2, { snap: snap({ w: { used: 0.3, resetIn: 5 * DAY } }) }),
    { ...acct('d', 3, { coolIn: 27 * SEC }), cooldownReason: 'throttle' },
  ];
  const plan = planRoute({ ...planInput(accounts), requestId: 'r', nowMs: NOW });

  it('the plan names its strategy, the deciding stage and a verdict code for every candidate', () => {
    assert.equal(plan.strategy, 'fill-first');
    assert.equal(plan.decidedBy, 'order');
    assert.equal(plan.selectionReason, 'weekly_reset');
    assert.deepEqual(
      plan.verdicts.map((v) => v.filter.code),
      ['eligible', 'eligible', 'eligible', 'cooling'],
    );
  });

  it("each loser's words give its own figure (its later weekly reset), never the winner's reason", () => {
    const [, b, c, d] = plan.verdicts;
    const texts = [b, c, d].map((v) => candidateText(v, accounts.find((a) => a.id === v.account)!.metrics, NOW));
    assert.equal(texts[0], `eligible — ranked 2nd: weekly reset later (${clockTime(NOW + 3 * DAY, NOW)})`);
    assert.equal(texts[1], `eligible — ranked 3rd: weekly reset later (${clockTime(NOW + 5 * DAY, NOW)})`);
    assert.equal(texts[2], 'cooling — throttled, 27 s remaining');
    for (const t of texts) assert.doesNotMatch(t, /expires soonest/);
    assert.equal(lossText('insertion_order', 10, accounts[1].metrics, NOW), 'eligible — ranked 11th: tied, and later in the account order');
  });

  it('decidedBy: filter when one account was eligible, modify when affinity moved the winner', () => {
    const one = planRoute(planInput([acct('a', 0), acct('b', 1, { coolIn: MIN })]));
    assert.equal(one.decidedBy, 'filter');
    const bound = planRoute(planInput(accounts, { sessionAffinity: true }, { binding: { account: 'c', lastServedAtMs: NOW - MIN } }));
    assert.equal(bound.selectionReason, 'session_affinity');
    assert.equal(bound.decidedBy, 'modify');
  });

  it('the record carries decidedBy and each filter verdict; the hand-written line equals JSON.stringify', () => {
    const r = buildDecisionRecord(REQ, plan, DEFAULT_POLICY, OUT);
    assert.equal(r.decidedBy, 'order');
    assert.deepEqual(r.candidates[3].filter, { code: 'cooling', reason: 'throttle', untilMs: NOW + 27 * SEC });
    const line = new DecisionLineEncoder().encode(r);
    assert.equal(line, JSON.stringify(r));
    const verdicts: FilterVerdict[] = [
      { code: 'soft_limit', used: 0.5, resetMs: null },
      { code: 'over_cap', inflight: 1, cap: 1 },
      { code: 'window_exhausted', window: 'unified', resetMs: 5 },
      { code: 'scoped_exhausted', family: 'opus "x"', resetMs: null },
      { code: 'needs_sign_in' },
      { code: 'disabled' },
    ];
    const weighted = planRoute({
      ...planInput([{ ...accounts[0], priority: 2, costTier: 3 }, accounts[1]], { strategy: 'weighted', weights: { cost: 0.1 } }),
      requestId: 'r',
      nowMs: NOW,
    });
    const wr = buildDecisionRecord(REQ, weighted, { ...DEFAULT_POLICY, strategy: 'weighted' }, OUT);
    assert.deepEqual(wr.strategyInputs?.accounts, { a: { priority: 2, costTier: 3 } });
    assert.equal(new DecisionLineEncoder().encode(wr), JSON.stringify(wr));
    assert.equal(r.strategyInputs, undefined, 'fill-first records carry no strategy inputs');
    for (const filter of verdicts) {
      const x = { ...r, candidates: r.candidates.map((c) => ({ ...c, filter })) };
      assert.equal(new DecisionLineEncoder().encode(x), JSON.stringify(x));
    }
  });
});
