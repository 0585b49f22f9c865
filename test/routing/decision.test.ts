import { strict as assert } from 'node:assert';
import { buildDecisionRecord, metricsFromRecord, metricsToRecord } from '../../src/routing/decision';
import { planRoute } from '../../src/routing/plan';
import { DEFAULT_POLICY } from '../../src/routing/policy';
import { rankAccounts, type RankCandidate } from '../../src/routing/ranking';
import { DAY, HOUR, MIN, acct, ids, planInput, snap } from './builders';

const INFINITE_FIELDS = ['coolingUntilMs', 'sessionResetMs', 'weeklyResetMs', 'sessionResetBucket', 'scopedResetMs'] as const;

function candidates(): RankCandidate[] {
  return [
    acct('none', 0, { snap: null }),
    acct('renewed', 1, { snap: snap({ s: { used: 0.9, resetIn: -1 }, w: { resetAt: 0 } }) }),
    acct('ticking', 2, { family: 'sonnet', snap: snap({ s: { used: 0.5, resetIn: HOUR }, w: { used: 0.6, resetIn: DAY }, scoped: { sonnet: { used: 0.3 } } }) }),
    acct('cooling', 3, { coolIn: 5 * MIN }),
    acct('signin', 4, { needsSignIn: true }),
    acct('saturated', 5, { primary: true, snap: snap({ s: { used: 0.98, resetIn: 30 * MIN } }) }),
    acct('nullweekly', 6, { snap: snap({ w: { noUsed: true } }) }),
  ];
}

describe('routing/decision metrics records', () => {
  it('Infinity fields become null in the record and come back as Infinity through JSON', () => {
    for (const c of candidates()) {
      const rec = metricsToRecord(c.metrics);
      for (const k of INFINITE_FIELDS) {
        if (c.metrics[k] === Infinity) assert.equal(rec[k], null, `${c.id}.${k}`);
        else assert.equal(rec[k], c.metrics[k], `${c.id}.${k}`);
      }
      const back = metricsFromRecord(JSON.parse(JSON.stringify(rec)));
      // JSON drops undefined-valued keys (unusableReason of a usable account); compare without them
      const defined = Object.fromEntries(Object.entries(c.metrics).filter(([, v]) => v !== undefined));
      assert.deepEqual(back, defined, c.id);
    }
  });

  it('the fixture covers both finite and infinite values of every such field', () => {
    const all = candidates().map((c) => c.metrics);
    for (const k of INFINITE_FIELDS) {
      assert.ok(
        all.some((m) => m[k] === Infinity),
        `${k} infinite somewhere`,
      );
      assert.ok(
        all.some((m) => Number.isFinite(m[k])),
        `${k} finite somewhere`,
      );
    }
  });

  it('ranking the round-tripped metrics gives the same order and reasons', () => {
    const original = candidates();
    const restored = original.map((c) => ({ ...c, metrics: metricsFromRecord(JSON.parse(JSON.stringify(metricsToRecord(c.metrics)))) }));
    for (const ranking of ['expiry-first', 'headroom-first'] as const) {
      const a = rankAccounts(original, ranking);
      const b = rankAccounts(restored, ranking);
      assert.deepEqual(ids(b.order), ids(a.order));
      assert.equal(b.reason, a.reason);
    }
    // without the restore step, the nulls would rank differently (this test can fail)
    const naive = original.map((c) => ({ ...c, metrics: JSON.parse(JSON.stringify(c.metrics)) }));
    assert.notDeepEqual(ids(rankAccounts(naive, 'expiry-first').order), ids(rankAccounts(original, 'expiry-first').order));
  });

  it('buildDecisionRecord records every candidate with its verdict and counts usable non-fallback accounts', () => {
    const accounts = [...(candidates() as ReturnType<typeof acct>[]), acct('fb', 7, { fallback: true })];
    const plan = planRoute(planInput(accounts));
    const facts = {
      ts: '2026-11-30T00:00:00.000Z',
      requestId: 'r1',
      stickyKeySource: 'header' as const,
      stickyKind: 'session' as const,
      stickyKeyHash: '0123456789abcdef',
      path: '/v1/messages',
      model: null,
      stream: true,
    };
    const rec = buildDecisionRecord(facts, plan, DEFAULT_POLICY, {
      servedBy: null,
      servedByFallback: false,
      attempts: [],
      outcome: 'no_usable_account',
      status: 429,
      usage: null,
      durationMs: 3,
    });
    assert.equal(rec.requestId, 'r1');
    assert.equal(rec.outcome, 'no_usable_account');
    assert.equal(rec.ranking, DEFAULT_POLICY.accountRanking);
    assert.deepEqual(
      rec.candidates.map((c) => c.account),
      ids(plan.order),
    );
    assert.equal(rec.usableAccounts, 5);
    const fb = rec.candidates.find((c) => c.account === 'fb')!;
    assert.equal(fb.fallback, true);
    assert.equal(fb.reason, 'fallback_last');
    assert.doesNotThrow(() => JSON.parse(JSON.stringify(rec)));
    assert.equal(rec.selectionReason, plan.selectionReason);
  });
});
