import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { computeMetrics } from '../../src/routing/metrics';
import { compareExpiryFirst, compareHeadroomFirst, rankAccounts, rankContextFor, type RankCandidate } from '../../src/routing/ranking';
import type { Cooldown, QuotaSnapshot, QuotaWindow, ScopedQuotaWindow } from '../../src/quota/types';
import { DAY, HOUR, MIN, NOW } from './builders';

/** Fixed seed: the run is reproducible; a failure prints its counterexample. */
const RUNS = { seed: 20251104, numRuns: 400 } as const;

// Values chosen from small sets so ties on every step are common.
const utilization = fc.constantFrom<number | undefined>(undefined, 0, 0.2, 0.5, 0.5, 0.9, 0.96, 0.97, 0.99, 1, 1.2);
const status = fc.constantFrom<string | undefined>(undefined, 'allowed', 'allowed', 'allowed_warning', 'rejected', 'throttled', 'weird');
/** Reset offsets from NOW; 0 → field absent; includes the past and near-equal values inside one 15-min bucket. */
const resetOffset = fc.constantFrom(0, -MIN, 5 * MIN, 14 * MIN, 16 * MIN, HOUR, HOUR + 1, 3 * HOUR, DAY, 3 * DAY, 3 * DAY);
const age = fc.constantFrom(0, MIN, 14 * MIN, 15 * MIN, 15 * MIN + 1, 40 * MIN);

const windowArb: fc.Arbitrary<QuotaWindow | undefined> = fc.option(
  fc.record({ status, utilization, reset: resetOffset }).map(({ status: st, utilization: u, reset }) => {
    const w: QuotaWindow = {};
    if (st !== undefined) w.status = st;
    if (u !== undefined) w.utilization = u;
    if (reset !== 0) w.resetAtMs = NOW + reset;
    return w;
  }),
  { nil: undefined, freq: 4 },
);

const scopedArb: fc.Arbitrary<ScopedQuotaWindow | undefined> = fc.option(
  fc.record({ w: windowArb, age }).map(({ w, age: a }) => ({ ...(w ?? {}), observedAtMs: NOW - a })),
  { nil: undefined, freq: 2 },
);

const snapshotArb: fc.Arbitrary<QuotaSnapshot | undefined> = fc.option(
  fc
    .record({
      age,
      unified: status,
      unifiedReset: resetOffset,
      session: windowArb,
      weekly: windowArb,
      sonnet: scopedArb,
      overage: fc.option(fc.record({ status, inUse: fc.option(fc.boolean(), { nil: undefined }) }), { nil: undefined }),
    })
    .map((r): QuotaSnapshot => {
      const s: QuotaSnapshot = { observedAtMs: NOW - r.age, source: 'headers', scoped: {} };
      if (r.unified !== undefined) s.unifiedStatus = r.unified;
      if (r.unifiedReset !== 0) s.unifiedResetAtMs = NOW + r.unifiedReset;
      if (r.session) s.session = r.session;
      if (r.weekly) s.weekly = r.weekly;
      if (r.sonnet) s.scoped.sonnet = r.sonnet;
      if (r.overage) s.overage = r.overage;
      return s;
    }),
  { nil: undefined, freq: 5 },
);

const cooldownArb: fc.Arbitrary<Cooldown | undefined> = fc.option(
  fc.constantFrom(-MIN, 0, 30_000, 30_000, 10 * MIN).map((d): Cooldown => ({ untilMs: NOW + d, reason: 'throttle', setAtMs: NOW - MIN })),
  { nil: undefined, freq: 3 },
);

const accountArb = fc.record({ snapshot: snapshotArb, cooldown: cooldownArb });

const scenarioArb = fc.record({
  /** `signIn === 0` (1 in 10) marks an account that needs sign-in. */
  accounts: fc.array(fc.record({ a: accountArb, signIn: fc.integer({ min: 0, max: 9 }) }), { minLength: 2, maxLength: 8 }),
  primary: fc.integer({ min: -1, max: 7 }),
  L: fc.constantFrom(0.5, 0.97, 1),
  T: fc.constantFrom(1, 15 * MIN, HOUR),
  allowOverage: fc.boolean(),
  family: fc.constantFrom<string | undefined>('sonnet', 'sonnet', 'opus', undefined),
  now: fc.constantFrom(NOW, NOW + 10 * MIN),
  permutationSeed: fc.integer(),
});

type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

function candidates(sc: Scenario): RankCandidate[] {
  return sc.accounts.map(({ a, signIn }, index) => ({
    id: `acct${index}`,
    index,
    isPrimary: index === sc.primary,
    metrics: computeMetrics(
      { snapshot: a.snapshot, cooldown: a.cooldown, needsSignIn: signIn === 0 },
      { sessionSoftLimit: sc.L, sessionResetToleranceMs: sc.T, allowOverage: sc.allowOverage, modelFamily: sc.family },
      sc.now,
    ),
  }));
}

/** Deterministic Fisher–Yates shuffle. */
function shuffled<T>(xs: readonly T[], seed: number): T[] {
  const out = [...xs];
  let s = seed >>> 0 || 1;
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

for (const [name, compare] of [
  ['expiry-first', compareExpiryFirst],
  ['headroom-first', compareHeadroomFirst],
] as const) {
  describe(`routing/ranking ${name} properties (seeded)`, () => {
    it('is deterministic: any permutation of the input ranks to the same order', () => {
      fc.assert(
        fc.property(scenarioArb, (sc) => {
          const cs = candidates(sc);
          const base = rankAccounts(cs, name);
          const again = rankAccounts(shuffled(cs, sc.permutationSeed), name);
          assert.deepEqual(again.order.map((c) => c.id), base.order.map((c) => c.id));
          assert.equal(again.reason, base.reason);
        }),
        RUNS,
      );
    });

    it('is total and antisymmetric: compare(a,b) = −compare(b,a), 0 only for a === b', () => {
      fc.assert(
        fc.property(scenarioArb, (sc) => {
          const cs = candidates(sc);
          const ctx = rankContextFor(cs);
          for (const a of cs) {
            assert.equal(compare(a, a, ctx).order, 0);
            for (const b of cs) {
              if (a === b) continue;
              const ab = compare(a, b, ctx);
              const ba = compare(b, a, ctx);
              assert.notEqual(ab.order, 0, `${a.id} vs ${b.id} tie`);
              assert.equal(Math.sign(ab.order), -Math.sign(ba.order), `${a.id} vs ${b.id}`);
              assert.equal(ab.reason, ba.reason, 'the separating step is the same either way round');
            }
          }
        }),
        RUNS,
      );
    });

    it('is transitive over every triple', () => {
      fc.assert(
        fc.property(scenarioArb, (sc) => {
          const cs = candidates(sc);
          const ctx = rankContextFor(cs);
          for (const a of cs)
            for (const b of cs)
              for (const c of cs) {
                if (a === b || b === c || a === c) continue;
                if (compare(a, b, ctx).order < 0 && compare(b, c, ctx).order < 0) {
                  const ac = compare(a, c, ctx);
                  assert.ok(ac.order < 0, `not transitive: ${a.id} < ${b.id} < ${c.id} but ${a.id} vs ${c.id} = ${ac.order} (${ac.reason})`);
                }
              }
        }),
        RUNS,
      );
    });

    it('the ranked order is sorted: every adjacent pair compares < 0', () => {
      fc.assert(
        fc.property(scenarioArb, (sc) => {
          const cs = candidates(sc);
          const ctx = rankContextFor(cs);
          const order = rankAccounts(cs, name).order;
          for (let i = 0; i + 1 < order.length; i++) assert.ok(compare(order[i], order[i + 1], ctx).order < 0);
          // usable accounts always come before unusable ones
          const firstUnusable = order.findIndex((c) => !c.metrics.usable);
          if (firstUnusable >= 0) assert.ok(order.slice(firstUnusable).every((c) => !c.metrics.usable));
        }),
        RUNS,
      );
    });
  });
}
