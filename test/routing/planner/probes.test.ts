import { strict as assert } from 'node:assert';
import { buildDecisionRecord } from '../../../src/routing/decision';
import { planRoute, type PlanAccount } from '../../../src/routing/plan';
import { replayDecisions } from '../../../src/routing/replay';
import { DEFAULT_POLICY } from '../../../src/routing/policy';
import { STRATEGY_NAMES } from '../../../src/routing/planner/strategies/registry';
import type { Cooldown } from '../../../src/quota/types';
import { DAY, MIN, NOW, acct, ids, planInput, snap } from '../builders';

const plan = (accounts: PlanAccount[], rest: Parameters<typeof planInput>[2] = {}, policy = {}) => planRoute({ ...planInput(accounts, policy, rest), requestId: 'r', nowMs: NOW });

describe('routing/planner: evidence probes — an account with unknown quota is not starved', () => {
  /** a has known quota; b and c none yet (a cold start after a's first answer). */
  const pool = (aInflight: number, bInflight = 0) => [
    acct('a', 0, { inflight: aInflight }),
    { ...acct('b', 1, { snap: null, inflight: bInflight }), probe: 'evidence' as const },
    { ...acct('c', 2, { snap: null }), probe: 'evidence' as const },
  ];

  it('while the first choice is busy, the first account without evidence and with nothing in flight takes the request', () => {
    const p = plan(pool(1));
    assert.deepEqual(ids(p.order), ['b', 'a', 'c']);
    assert.equal(p.selectionReason, 'evidence_probe');
    assert.equal(p.decidedBy, 'modify');
    assert.deepEqual(p.probe, { account: 'b', kind: 'evidence' });
    assert.deepEqual(ids(plan(pool(1, 1)).order).slice(0, 1), ['c'], 'one request at a time per account');

    const lone = plan(pool(0));
    assert.equal(lone.order[0].id, 'a', 'a lone request keeps known quota first');
    assert.equal(lone.probe, undefined);
    const bound = plan(pool(1), { sessionId: 's', binding: { account: 'a', lastServedAtMs: NOW } }, { sessionAffinity: true });
    assert.equal(bound.order[0].id, 'a', 'a bound session is never the probe');
    assert.equal(bound.probe, undefined);
  });
});

describe('routing/planner: recovery probes — a cooled account whose quota reads recovered is re-checked first', () => {
  const cooldown: Cooldown = { untilMs: NOW + 3 * DAY, reason: 'window_exhausted', setAtMs: NOW - 10 * MIN, windows: ['7d'] };
  const pool = () => [{ ...acct('a', 0, { cooldown }), probe: 'recovery' as const, cooldownReason: 'window_exhausted' }, acct('b', 1, { snap: snap({ w: { used: 0.1 } }) })];

  it('under every strategy, for a request without an active binding (never ahead of one); its verdict names the re-check', () => {
    for (const strategy of STRATEGY_NAMES) {
      const p = plan(pool(), {}, { strategy, singleAccountLabel: 'a' });
      assert.equal(p.order[0].id, 'a', strategy);
      assert.deepEqual(p.probe, { account: 'a', kind: 'recovery' }, strategy);
      assert.deepEqual(p.verdicts[0].filter, { code: 'recovery_probe', untilMs: NOW + 3 * DAY }, strategy);
    }
    const bound = plan(pool(), { sessionId: 's', binding: { account: 'b', lastServedAtMs: NOW } }, { sessionAffinity: true });
    assert.equal(bound.order[0].id, 'b');
    assert.equal(bound.probe, undefined);
  });

  it('replay plans a probe’s decision again exactly, from the record alone', () => {
    for (const strategy of ['round-robin', 'reset-drain', 'capacity-weighted']) {
      const policy = { ...DEFAULT_POLICY, strategy };
      const p = plan(pool(), { sessionId: null }, { strategy });
      assert.equal(p.probe?.account, 'a', strategy);
      const record = buildDecisionRecord(
        { ts: new Date(NOW).toISOString(), requestId: 'r', stickyKeySource: 'none', stickyKind: 'none', stickyKeyHash: null, path: '/v1/messages', model: null, stream: false },
        p,
        policy,
        { servedBy: 'a', servedByFallback: false, attempts: [], outcome: 'success', status: 200, usage: null, durationMs: 1 },
      );
      assert.deepEqual(record.probe, { account: 'a', kind: 'recovery' });
      const replay = replayDecisions([JSON.parse(JSON.stringify(record))], 'expiry-first');
      assert.deepEqual(replay.differences, [], strategy);
    }
  });
});
