import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { policyFromSettings } from '../../../src/config/settingsPolicy';
import { parseConfigText } from '../../../src/config/load';
import { policyFrom } from '../../../src/config/schema';
import { camelToKebab } from '../../../src/config/keys';
import { DecisionLineEncoder } from '../../../src/routing/decisionLine';
import { buildDecisionRecord } from '../../../src/routing/decision';
import { planRoute, type PlanAccount } from '../../../src/routing/plan';
import { earlierResetBucket, overStickyThreshold } from '../../../src/routing/planner/modify';
import { STRATEGY_NAMES } from '../../../src/routing/planner/strategies/registry';
import { verdictText } from '../../../src/routing/planner/verdict';
import { DEFAULT_POLICY, type RoutingPolicy } from '../../../src/routing/policy';
import { DAY, HOUR, MIN, NOW, acct, ids, planInput, snap } from '../builders';

const BOUND = { account: 'a', lastServedAtMs: NOW };

/** a (bound) resets sooner, so fill-first ranks it first; b is the other account. */
function pair(aWeekly: number, aInflight: number, bWeekly: number, bSession = 0.1): PlanAccount[] {
  return [
    acct('a', 0, { snap: snap({ w: { used: aWeekly, resetIn: 2 * DAY }, s: { used: 0.1, resetIn: HOUR } }), inflight: aInflight }),
    acct('b', 1, { snap: snap({ w: { used: bWeekly, resetIn: 3 * DAY }, s: { used: bSession, resetIn: HOUR } }) }),
  ];
}

function planBound(accounts: PlanAccount[], policy: Partial<RoutingPolicy>) {
  return planRoute({ ...planInput(accounts, { sessionAffinity: true, ...policy }, { sessionId: 'sess-1', binding: BOUND }), requestId: 'r', nowMs: NOW });
}

describe('routing/planner: sticky reallocation thresholds', () => {
  it('a session at 68 % weekly with one request in flight (2.5 % each) crosses 70 % and moves', () => {
    const stays = planBound(pair(0.68, 0, 0.3), { stickyThreshold7d: 70 });
    assert.equal(stays.order[0].id, 'a');
    assert.equal(stays.selectionReason, 'session_affinity');

    const moves = planBound(pair(0.68, 1, 0.3), { stickyThreshold7d: 70 });
    assert.deepEqual(ids(moves.order), ['b', 'a']);
    assert.equal(moves.selectionReason, 'sticky_reallocation');
    assert.equal(moves.decidedBy, 'modify');
    assert.deepEqual(moves.affinity, { sessionBound: true, boundAccount: 'a', applied: false, skippedReason: 'over_sticky_threshold' });
    const a = moves.verdicts.find((v) => v.account === 'a')!;
    assert.deepEqual(a.filter, { code: 'over_sticky_threshold', window: '7d', used: 70.5, threshold: 70 });
    assert.equal(verdictText(a.filter, NOW), 'over sticky threshold (weekly 70.5 % > 70 %)');
    assert.equal(a.reason, 'sticky_reallocation');
  });

  it('a sticky move or a spill never chooses an account at its in-flight cap (the attempt loop would pass it over)', () => {
    const capped = pair(0.68, 1, 0.3);
    capped[1] = { ...capped[1], inflight: 2 };
    const sticky = planBound(capped, { stickyThreshold7d: 70, maxInflightPerAccount: 2 });
    assert.equal(sticky.order[0].id, 'a', 'the session stays: the only account below the threshold is full');
    assert.equal(sticky.selectionReason, 'session_affinity');
    assert.equal(planBound(capped, { stickyThreshold7d: 70, maxInflightPerAccount: 3 }).selectionReason, 'sticky_reallocation', 'with room it moves');

    const busy = [acct('a', 0, { inflight: 3 }), acct('b', 1, { inflight: 1 }), acct('c', 2, { inflight: 0 })];
    const spill = planRoute({ ...planInput(busy, { spillInflight: 2, maxInflightPerAccount: 1 }), requestId: 'r', nowMs: NOW });
    assert.equal(spill.spill?.to, 'c', 'b is below the spill point but at its cap');
  });

  it('the words carry the figures', () => {
    assert.equal(verdictText({ code: 'over_sticky_threshold', window: '7d', used: 72, threshold: 70 }, NOW), 'over sticky threshold (weekly 72 % > 70 %)');
    assert.equal(verdictText({ code: 'over_sticky_threshold', window: '5h', used: 91.3, threshold: 90 }, NOW), 'over sticky threshold (5-hour 91.3 % > 90 %)');
  });

  it('the in-flight penalty is a setting: at 0 the same session stays', () => {
    assert.equal(planBound(pair(0.68, 1, 0.3), { stickyThreshold7d: 70, inflightPenaltyPct: 0 }).selectionReason, 'session_affinity');
    assert.equal(planBound(pair(0.61, 2, 0.3), { stickyThreshold7d: 70, inflightPenaltyPct: 5 }).selectionReason, 'sticky_reallocation');
  });

  it('moves only when another eligible account is below both thresholds', () => {
    // b is over the weekly threshold too: the session stays.
    assert.equal(planBound(pair(0.8, 0, 0.75), { stickyThreshold7d: 70 }).selectionReason, 'session_affinity');
    // b is below the weekly threshold but over the 5-hour one: the session stays.
    const overFiveHour = planBound(pair(0.8, 0, 0.3, 0.95), { stickyThreshold7d: 70, stickyThreshold5h: 90 });
    assert.equal(overFiveHour.order[0].id, 'a');
    assert.equal(overFiveHour.affinity.applied, true);
    // b is exactly at the threshold (not over it): it counts as below, the session moves.
    assert.equal(planBound(pair(0.8, 0, 0.7), { stickyThreshold7d: 70 }).selectionReason, 'sticky_reallocation');
    // The only other account is not usable: the session stays.
    const cooling = [pair(0.8, 0, 0.3)[0], acct('b', 1, { coolIn: 5 * MIN })];
    assert.equal(planBound(cooling, { stickyThreshold7d: 70 }).selectionReason, 'session_affinity');
  });

  it('the target is the first account of the strategy order below both thresholds', () => {
    const accounts = [
      acct('a', 0, { snap: snap({ w: { used: 0.9, resetIn: 2 * DAY } }) }),
      acct('c', 1, { snap: snap({ w: { used: 0.8, resetIn: 2.5 * DAY } }) }),
      acct('d', 2, { snap: snap({ w: { used: 0.2, resetIn: 4 * DAY } }) }),
      acct('e', 3, { snap: snap({ w: { used: 0.1, resetIn: 5 * DAY } }) }),
    ];
    assert.deepEqual(ids(planBound(accounts, { stickyThreshold7d: 70 }).order), ['d', 'a', 'c', 'e']);
  });

  it('the account the session left names the move as its reason, even when the order ranked it lower', () => {
    const p = planRoute({
      ...planInput(pair(0.3, 0, 0.8), { sessionAffinity: true, stickyThreshold7d: 70 }, { sessionId: 'sess-1', binding: { account: 'b', lastServedAtMs: NOW } }),
      requestId: 'r',
      nowMs: NOW,
    });
    assert.deepEqual(ids(p.order), ['a', 'b']);
    assert.equal(p.selectionReason, 'sticky_reallocation');
    assert.deepEqual(p.verdicts[1], {
      account: 'b',
      rank: 1,
      verdict: 'ranked_below',
      reason: 'sticky_reallocation',
      filter: { code: 'over_sticky_threshold', window: '7d', used: 80, threshold: 70 },
    });
  });

  it('reads the 5-hour window with its own threshold', () => {
    const accounts = [
      acct('a', 0, { snap: snap({ w: { used: 0.2, resetIn: 2 * DAY }, s: { used: 0.85, resetIn: HOUR } }), inflight: 1 }),
      acct('b', 1, { snap: snap({ w: { used: 0.2, resetIn: 3 * DAY }, s: { used: 0.1, resetIn: HOUR } }) }),
    ];
    const p = planBound(accounts, { stickyThreshold5h: 85 });
    assert.equal(p.selectionReason, 'sticky_reallocation');
    assert.deepEqual(p.verdicts.find((v) => v.account === 'a')!.filter, { code: 'over_sticky_threshold', window: '5h', used: 87.5, threshold: 85 });
  });

  it('is off by default, and acts only for strategies whose modifiers include affinity', () => {
    assert.equal(planBound(pair(0.99 - 0.02, 3, 0.1), {}).selectionReason, 'session_affinity');
    assert.equal(overStickyThreshold(pair(0.99, 3, 0.1)[0], DEFAULT_POLICY), null);
    for (const strategy of ['capacity-weighted', 'usage-weighted', 'sequential-drain', 'reset-drain', 'relative-availability']) {
      assert.equal(planBound(pair(0.8, 0, 0.3), { strategy, stickyThreshold7d: 70 }).selectionReason, 'sticky_reallocation', strategy);
    }
    for (const strategy of ['weighted', 'round-robin', 'single-account']) {
      const p = planBound(pair(0.8, 0, 0.3), { strategy, stickyThreshold7d: 70 });
      assert.notEqual(p.selectionReason, 'sticky_reallocation', strategy);
      assert.notEqual(p.affinity.skippedReason, 'over_sticky_threshold', strategy);
    }
  });

  it('the decision record carries the verdict code with its figures', () => {
    const p = planBound(pair(0.68, 1, 0.3), { stickyThreshold7d: 70 });
    const rec = buildDecisionRecord(
      {
        ts: new Date(NOW).toISOString(),
        requestId: 'r',
        stickyKeySource: 'header',
        stickyKind: 'session',
        stickyKeyHash: '0123456789abcdef',
        path: '/v1/messages',
        model: 'claude-opus-4',
        stream: true,
      },
      p,
      { ...DEFAULT_POLICY, sessionAffinity: true, stickyThreshold7d: 70 },
      { servedBy: 'b', servedByFallback: false, attempts: [], outcome: 'success', status: 200, usage: null, durationMs: 1 },
    );
    const line = new DecisionLineEncoder().encode(rec);
    assert.deepEqual(JSON.parse(line), JSON.parse(JSON.stringify(rec)));
    assert.match(line, /"code":"over_sticky_threshold","window":"7d","used":70.5,"threshold":70/);
    assert.match(line, /"skippedReason":"over_sticky_threshold"/);
  });
});

describe('routing/planner: prefer-earlier-reset', () => {
  // Weekly resets (NOW is 12:00 UTC): a in 36 h (day +2), b in 30 h (day +1, 18:00), c in 20 h (day +1, 08:00).
  const accounts = [
    acct('a', 0, { snap: snap({ w: { used: 0.1, resetIn: 36 * HOUR } }) }),
    acct('b', 1, { snap: snap({ w: { used: 0.2, resetIn: 30 * HOUR } }) }),
    acct('c', 2, { snap: snap({ w: { used: 0.5, resetIn: 20 * HOUR } }) }),
  ];

  it('restricts the first choice to the soonest whole-day bucket, keeping the strategy order inside it', () => {
    const off = planRoute({ ...planInput(accounts, { strategy: 'usage-weighted' }), requestId: 'r', nowMs: NOW });
    assert.deepEqual(ids(off.order), ['a', 'b', 'c']);
    const on = planRoute({ ...planInput(accounts, { strategy: 'usage-weighted', preferEarlierReset: true }), requestId: 'r', nowMs: NOW });
    // b and c share a day bucket (b resets later in the day, but is less used): b first, then c, then a.
    assert.deepEqual(ids(on.order), ['b', 'c', 'a']);
    assert.equal(on.selectionReason, 'earlier_reset');
    assert.equal(on.decidedBy, 'modify');
    assert.equal(on.verdicts[2].reason, 'earlier_reset');
  });

  it('compares whole days: resets hours apart on the same day tie, across midnight they do not', () => {
    const day = Math.floor(NOW / DAY);
    assert.equal(earlierResetBucket(accounts[1]), day + 1);
    assert.equal(earlierResetBucket(accounts[2]), day + 1);
    assert.equal(earlierResetBucket(accounts[0]), day + 2);
    // No weekly reset known: the 5-hour reset stands in, in the same buckets; neither known: last.
    assert.equal(earlierResetBucket(acct('x', 0, { snap: snap({ w: null, s: { used: 0.1, resetIn: 2 * HOUR } }) })), day);
    assert.equal(earlierResetBucket(acct('y', 0, { snap: null })), Infinity);
  });

  it('applies to fill-first, capacity-weighted and usage-weighted only', () => {
    const headroomFirst = planRoute({ ...planInput(accounts, { accountRanking: 'headroom-first', preferEarlierReset: true }), requestId: 'r', nowMs: NOW });
    assert.deepEqual(ids(headroomFirst.order), ['b', 'c', 'a']);
    for (let i = 0; i < 20; i++) {
      const drawn = planRoute({ ...planInput(accounts, { strategy: 'capacity-weighted', preferEarlierReset: true }), requestId: `r${i}`, nowMs: NOW });
      assert.notEqual(drawn.order[0].id, 'a', `request r${i}`);
    }
    for (const strategy of ['round-robin', 'relative-availability', 'sequential-drain', 'reset-drain', 'single-account', 'weighted']) {
      const input = { requestId: 'r', nowMs: NOW };
      const off = planRoute({ ...planInput(accounts, { strategy }), ...input });
      const on = planRoute({ ...planInput(accounts, { strategy, preferEarlierReset: true }), ...input });
      assert.deepEqual(ids(on.order), ids(off.order), strategy);
    }
  });

  it('a bound session and a preferred primary keep the front; the rest is restricted behind them', () => {
    const bound = planRoute({
      ...planInput(accounts, { sessionAffinity: true, accountRanking: 'headroom-first', preferEarlierReset: true }, { binding: BOUND }),
      requestId: 'r',
      nowMs: NOW,
    });
    assert.deepEqual(ids(bound.order), ['a', 'b', 'c']);
    assert.equal(bound.selectionReason, 'session_affinity');
    const primary = [{ ...accounts[0], isPrimary: true }, accounts[1], accounts[2]];
    const p = planRoute({
      ...planInput(primary, { preferPrimary: true, primaryAccount: 'a', accountRanking: 'headroom-first', preferEarlierReset: true }),
      requestId: 'r',
      nowMs: NOW,
    });
    assert.equal(p.order[0].id, 'a');
    assert.equal(p.selectionReason, 'preferred_primary');
  });
});

describe('routing/planner: both modifiers keep a total, deterministic order (seeded property)', () => {
  const spec = fc.record({
    weekly: fc.double({ min: 0, max: 1, noNaN: true }),
    session: fc.double({ min: 0, max: 1, noNaN: true }),
    weeklyReset: fc.integer({ min: 1, max: 7 * 24 }),
    sessionReset: fc.integer({ min: 1, max: 5 * 60 }),
    cooling: fc.boolean(),
    noSnap: fc.boolean(),
    inflight: fc.integer({ min: 0, max: 6 }),
    fallback: fc.boolean(),
  });

  it('a permutation of the accounts, the same for the same input, for every strategy', () => {
    fc.assert(
      fc.property(
        fc.array(spec, { maxLength: 10 }),
        fc.constantFrom(...STRATEGY_NAMES),
        fc.option(fc.double({ min: 0, max: 100, noNaN: true }), { nil: undefined }),
        fc.option(fc.double({ min: 0, max: 100, noNaN: true }), { nil: undefined }),
        fc.boolean(),
        fc.boolean(),
        fc.string(),
        (specs, strategy, t5, t7, earlier, primary, requestId) => {
          const accounts = specs.map((s, i) => ({
            ...acct(`acc-${i}`, i, {
              snap: s.noSnap ? null : snap({ w: { used: s.weekly, resetIn: s.weeklyReset * HOUR }, s: { used: s.session, resetIn: s.sessionReset * MIN } }),
              coolIn: s.cooling ? 5 * MIN : undefined,
              inflight: s.inflight,
              fallback: s.fallback && i > 0,
              primary: primary && i === 1,
            }),
          }));
          const policy = {
            strategy,
            sessionAffinity: true,
            stickyThreshold5h: t5,
            stickyThreshold7d: t7,
            preferEarlierReset: earlier,
            preferPrimary: primary,
            primaryAccount: primary ? 'acc-1' : undefined,
          };
          const binding = accounts.length ? { account: accounts[accounts.length - 1].id, lastServedAtMs: NOW } : undefined;
          const input = { ...planInput(accounts, policy, { binding }), requestId, nowMs: NOW };
          const a = planRoute(input);
          const b = planRoute({ ...input, accounts: [...accounts] });
          assert.equal(a.policyError, null);
          assert.deepEqual(ids(a.order), ids(b.order));
          assert.equal(a.selectionReason, b.selectionReason);
          if (strategy !== 'single-account') assert.deepEqual(ids(a.order).sort(), ids(accounts).sort());
          assert.equal(new Set(ids(a.order)).size, a.order.length);
          // A reallocated session lands on an eligible account that is over neither threshold.
          if (a.selectionReason === 'sticky_reallocation') {
            assert.ok(a.order[0].metrics.usable && !a.order[0].metrics.sessionSaturated);
            assert.equal(overStickyThreshold(a.order[0], input.policy), null);
          }
        },
      ),
      { seed: 13, numRuns: 300 },
    );
  });
});

describe('config: the sticky-threshold and prefer-earlier-reset keys', () => {
  it('parse from YAML in kebab-case, off by default', () => {
    const r = parseConfigText('routing:\n  sticky-threshold-5h: 90\n  sticky-threshold-7d: 70\n  inflight-penalty-pct: 5\n  prefer-earlier-reset: true\n');
    assert.ok(r.ok);
    const p = policyFrom(r.ok ? r.config.routing : undefined, {});
    assert.equal(p.stickyThreshold5h, 90);
    assert.equal(p.stickyThreshold7d, 70);
    assert.equal(p.inflightPenaltyPct, 5);
    assert.equal(p.preferEarlierReset, true);
    assert.equal(DEFAULT_POLICY.stickyThreshold5h, undefined);
    assert.equal(DEFAULT_POLICY.stickyThreshold7d, undefined);
    assert.equal(DEFAULT_POLICY.inflightPenaltyPct, 2.5);
    assert.equal(DEFAULT_POLICY.preferEarlierReset, false);
    assert.equal(camelToKebab('stickyThreshold7d'), 'sticky-threshold-7d');
  });

  it('errors name the key and the reason (a fraction is not a percentage)', () => {
    const bad = (yaml: string): string => {
      const r = parseConfigText(yaml);
      assert.equal(r.ok, false);
      return (r as { error: string }).error;
    };
    assert.match(bad('routing:\n  sticky-threshold-7d: 101\n'), /^routing\.sticky-threshold-7d: must be a percentage from 0 to 100/);
    assert.match(bad('routing:\n  sticky-threshold-5h: -0.5\n'), /^routing\.sticky-threshold-5h: must be a percentage/);
    assert.match(bad('routing:\n  inflight-penalty-pct: 200\n'), /^routing\.inflight-penalty-pct: must be from 0 to 100/);
    assert.match(bad('routing:\n  prefer-earlier-reset: "yes"\n'), /^routing\.prefer-earlier-reset: /);
  });

  it('map from VS Code settings: an empty (null) threshold is off; a bad one is named', () => {
    const r = policyFromSettings({ stickyThreshold5h: null, stickyThreshold7d: 70, preferEarlierReset: true }, undefined, {});
    assert.ok(r.ok);
    assert.equal(r.policy.stickyThreshold5h, undefined);
    assert.equal(r.policy.stickyThreshold7d, 70);
    assert.equal(r.sources['sticky-threshold-7d'], 'setting claudeRouter.routing.stickyThreshold7d');
    assert.equal(r.sources['sticky-threshold-5h'], 'default');
    const e = policyFromSettings({ stickyThreshold7d: 170 }, undefined, {});
    assert.equal(e.ok, false);
    assert.match((e as { error: string }).error, /claudeRouter\.routing\.stickyThreshold7d: must be a percentage/);
  });
});
