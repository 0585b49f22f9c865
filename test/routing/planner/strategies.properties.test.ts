import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { buildDecisionRecord, type DecisionRecord } from '../../../src/routing/decision';
import { planRoute, type PlanAccount } from '../../../src/routing/plan';
import { replayDecisions } from '../../../src/routing/replay';
import { STRATEGY_NAMES } from '../../../src/routing/planner/strategies/registry';
import { rankAccounts } from '../../../src/routing/ranking';
import { DAY, HOUR, MIN, NOW, acct, ids, planInput, snap } from '../builders';

/** An account with random quota shape: utilisations, resets, a cooldown, sign-in, soft limit, in-flight, priority, cost, latency factor, error rate. */
const accountArb = fc.record({
  weekly: fc.double({ min: 0, max: 1, noNaN: true }),
  session: fc.double({ min: 0, max: 1, noNaN: true }),
  weeklyReset: fc.integer({ min: 1, max: 7 * 24 }),
  sessionReset: fc.integer({ min: 1, max: 5 * 60 }),
  cooling: fc.boolean(),
  signIn: fc.boolean(),
  noSnap: fc.boolean(),
  inflight: fc.integer({ min: 0, max: 6 }),
  priority: fc.integer({ min: -2, max: 3 }),
  costTier: fc.integer({ min: 1, max: 4 }),
  fallback: fc.boolean(),
  planSize: fc.option(fc.constantFrom(1, 5, 20), { nil: undefined }),
  latencyFactor: fc.option(fc.double({ min: 0.5, max: 1, noNaN: true }), { nil: undefined }),
  recentErrorRate: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
});

type Spec = Omit<typeof accountArb extends fc.Arbitrary<infer T> ? T : never, 'planSize' | 'latencyFactor' | 'recentErrorRate'> & {
  planSize?: number;
  latencyFactor?: number;
  recentErrorRate?: number;
};

function build(specs: Spec[]): PlanAccount[] {
  return specs.map((s, i) => ({
    ...acct(`acc-${i}`, i, {
      snap: s.noSnap ? null : snap({ w: { used: s.weekly, resetIn: s.weeklyReset * HOUR }, s: { used: s.session, resetIn: s.sessionReset * MIN } }),
      coolIn: s.cooling ? 5 * MIN : undefined,
      needsSignIn: s.signIn && s.cooling,
      inflight: s.inflight,
      fallback: s.fallback && i > 0,
    }),
    priority: s.priority,
    costTier: s.costTier,
    planSize: s.planSize,
    latencyFactor: s.latencyFactor,
    recentErrorRate: s.recentErrorRate,
  }));
}

describe('routing/planner: properties of every strategy (seeded)', () => {
  it('a total, deterministic order: a permutation of the accounts, the same for the same input and request id', () => {
    fc.assert(
      fc.property(
        fc.array(accountArb, { minLength: 0, maxLength: 12 }),
        fc.constantFrom(...STRATEGY_NAMES),
        fc.string(),
        fc.option(fc.string(), { nil: null }),
        fc.boolean(),
        fc.integer({ min: 0, max: 3 }),
        (specs, strategy, requestId, sessionId, affinity, spill) => {
          const accounts = build(specs);
          const input = {
            ...planInput(
              accounts,
              { strategy, sessionAffinity: affinity, spillInflight: spill },
              { sessionId, binding: accounts[0] && sessionId ? { account: accounts[0].id, lastServedAtMs: NOW } : undefined },
            ),
            requestId,
            nowMs: NOW,
          };
          const a = planRoute(input);
          const b = planRoute({ ...input, accounts: [...accounts] });
          assert.equal(a.policyError, null);
          assert.deepEqual(ids(a.order), ids(b.order));
          assert.equal(a.verdicts.length, a.order.length);
          assert.equal(new Set(ids(a.order)).size, a.order.length, 'no account twice');
          if (strategy === 'single-account') assert.ok(a.order.length <= 1);
          else assert.deepEqual(ids(a.order).sort(), ids(accounts).sort(), 'every account, once');
          // Eligible accounts come before unusable ones (after any modifier).
          const firstUnusable = a.order.findIndex((x) => !x.metrics.usable && !x.fallback);
          if (firstUnusable >= 0) assert.ok(a.order.slice(firstUnusable).every((x) => !x.metrics.usable || x.fallback));
        },
      ),
      { seed: 1313, numRuns: 400 },
    );
  });

  it('the default (fill-first, expiry-first) orders exactly as the ranking: the order stage is the comparator', () => {
    fc.assert(
      fc.property(fc.array(accountArb, { minLength: 1, maxLength: 10 }), fc.string(), (specs, requestId) => {
        const accounts = build(specs).map((a) => ({ ...a, fallback: false }));
        const p = planRoute({ ...planInput(accounts), requestId, nowMs: NOW });
        const r = rankAccounts(accounts, 'expiry-first');
        assert.deepEqual(p.rankingOrder, ids(r.order as PlanAccount[]));
        assert.equal(p.selectionReason, r.reason);
      }),
      { seed: 2026, numRuns: 300 },
    );
  });

  it('draw-based strategies reproduce the same decision from the same request id, and vary across ids', () => {
    const accounts = build(
      Array.from({ length: 6 }, (_, i) => ({
        weekly: 0.1 * i,
        session: 0.1,
        weeklyReset: 24 + i * 10,
        sessionReset: 100,
        cooling: false,
        signIn: false,
        noSnap: false,
        inflight: 0,
        priority: 0,
        costTier: 1,
        fallback: false,
      })),
    );
    for (const strategy of ['capacity-weighted', 'relative-availability']) {
      const firsts = new Set<string>();
      for (let i = 0; i < 50; i++) {
        const input = { ...planInput(accounts, { strategy }), requestId: `req_${i}`, nowMs: NOW + DAY / 2 };
        const one = ids(planRoute(input).order);
        assert.deepEqual(ids(planRoute(input).order), one);
        firsts.add(one[0]);
      }
      assert.ok(firsts.size > 1, strategy);
    }
  });
});

describe('routing/planner: replay reproduces every strategy from the decision record', () => {
  it('a record written under any strategy replans to the same try order (0 differences)', () => {
    fc.assert(
      fc.property(
        fc.array(accountArb, { minLength: 1, maxLength: 8 }),
        fc.constantFrom(...STRATEGY_NAMES.filter((s) => s !== 'fill-first')),
        fc.string({ minLength: 1 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 50 }),
        (specs, strategy, requestId, affinity, spill, cursor) => {
          const accounts = build(specs);
          const sessionId = 'sess-1';
          const input = {
            ...planInput(
              accounts,
              { strategy, sessionAffinity: affinity, spillInflight: spill },
              { sessionId, roundRobinCursor: cursor, binding: affinity ? { account: accounts[0].id, lastServedAtMs: NOW } : undefined },
            ),
            requestId,
            nowMs: NOW + 1234,
          };
          const plan = planRoute(input);
          const record = JSON.parse(
            JSON.stringify(
              buildDecisionRecord(
                {
                  ts: new Date(NOW).toISOString(),
                  requestId,
                  stickyKeySource: sessionId ? ('header' as const) : ('none' as const),
                  stickyKind: sessionId ? ('session' as const) : ('none' as const),
                  stickyKeyHash: sessionId,
                  path: '/v1/messages',
                  model: null,
                  stream: false,
                },
                plan,
                input.policy,
                {
                  servedBy: null,
                  servedByFallback: false,
                  attempts: [],
                  outcome: 'success',
                  status: 200,
                  usage: null,
                  durationMs: 1,
                },
              ),
            ),
          ) as DecisionRecord;
          const result = replayDecisions([record], 'expiry-first');
          assert.equal(result.compared, 1);
          assert.deepEqual(result.differences, []);
        },
      ),
      { seed: 77, numRuns: 300 },
    );
  });
});
