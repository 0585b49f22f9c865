import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { computeMetrics } from '../../src/routing/metrics';
import { compareExpiryFirst, compareHeadroomFirst, rankAccounts, rankContextFor, type RankCandidate } from '../../src/routing/ranking';
import type { Cooldown, QuotaSnapshot, QuotaWindow, ScopedQuotaWindow } from '../../src/quota/types';
import { DAY, HOUR, MIN, NOW } from './builders';

/** Fixed seed: the run is reproducible; a failure prints its counterexample. */
const RUNS = { seed: 20251104, numRuns: 400 } as const;

// Values chosen from small sets, biased towards usable, fresh, allowed accounts, so ties reach the
// deep steps (resets, scoped and weekly utilisation, primary, insertion order) often.
const utilization = fc.constantFrom<number | undefined>(undefined, 0, 0.2, 0.2, 0.5, 0.5, 0.5, 0.9, 0.96, 0.97, 0.99, 1, 1.2);
const status = fc.constantFrom<string | undefined>(
  'allowed',
  'allowed',
  'allowed',
  'allowed',
  'allowed',
  'allowed',
  'allowed_warning',
  undefined,
  'rejected',
  'throttled',
  'weird',
);
/** Reset offsets from NOW; 0 → field absent; includes the past and near-equal values inside one 15-min bucket. */
const resetOffset = fc.constantFrom(0, -MIN, 14 * MIN, 16 * MIN, HOUR, HOUR, HOUR + 1, 3 * HOUR, 3 * HOUR, DAY, 3 * DAY, 3 * DAY);
/** Weekly resets vary less, so pairs often tie on them and reach the later steps. */
const weeklyResetOffset = fc.constantFrom(0, -MIN, DAY, 3 * DAY, 3 * DAY, 3 * DAY, 3 * DAY);
const age = fc.constantFrom(0, MIN, MIN, MIN, MIN, 15 * MIN, 15 * MIN + 1, 40 * MIN);

const windowBodyWith = (reset: fc.Arbitrary<number>) =>
  fc.record({ status, utilization, reset }).map(({ status: st, utilization: u, reset: r }) => {
    const w: QuotaWindow = {};
    if (st !== undefined) w.status = st;
    if (u !== undefined) w.utilization = u;
    if (r !== 0) w.resetAtMs = NOW + r;
    return w;
  });
const windowBody = windowBodyWith(resetOffset);
const windowArb: fc.Arbitrary<QuotaWindow | undefined> = fc.option(windowBody, { nil: undefined, freq: 6 });
const weeklyArb: fc.Arbitrary<QuotaWindow | undefined> = fc.option(windowBodyWith(weeklyResetOffset), { nil: undefined, freq: 6 });

const snapshotArb = fc.record({
  present: fc.integer({ min: 0, max: 9 }).map((n) => n > 0),
  age,
  unified: status,
  unifiedReset: resetOffset,
  session: windowArb,
  weekly: weeklyArb,
  sonnet: fc.record({ w: windowBody, age: fc.constantFrom(0, MIN, 15 * MIN, 15 * MIN + 1), present: fc.boolean() }),
  overage: fc.option(fc.record({ status, inUse: fc.option(fc.boolean(), { nil: undefined }) }), { nil: undefined, freq: 4 }),
});

/** `allScoped`: every account gets a fresh sonnet window (enables the scoped-utilisation step). */
function toSnapshot(r: typeof snapshotArb extends fc.Arbitrary<infer T> ? T : never, allScoped: boolean): QuotaSnapshot | undefined {
  if (!r.present && !allScoped) return undefined;
  const s: QuotaSnapshot = { observedAtMs: NOW - (allScoped ? Math.min(r.age, MIN) : r.age), source: 'headers', scoped: {} };
  if (r.unified !== undefined) s.unifiedStatus = r.unified;
  if (r.unifiedReset !== 0) s.unifiedResetAtMs = NOW + r.unifiedReset;
  if (r.session) s.session = r.session;
  if (r.weekly) s.weekly = r.weekly;
  if (allScoped) s.scoped.sonnet = { ...r.sonnet.w, observedAtMs: NOW - Math.min(r.sonnet.age, MIN) } satisfies ScopedQuotaWindow;
  else if (r.sonnet.present) s.scoped.sonnet = { ...r.sonnet.w, observedAtMs: NOW - r.sonnet.age };
  if (r.overage) s.overage = r.overage;
  return s;
}

const cooldownArb: fc.Arbitrary<Cooldown | undefined> = fc.option(
  fc.constantFrom(-MIN, 0, 30_000, 30_000, 10 * MIN).map((d): Cooldown => ({ untilMs: NOW + d, reason: 'throttle', setAtMs: NOW - MIN })),
  { nil: undefined, freq: 6 },
);

const scenarioArb = fc.record({
  /** `signIn === 0` (1 in 20) marks an account that needs sign-in. */
  accounts: fc.array(fc.record({ snap: snapshotArb, cooldown: cooldownArb, signIn: fc.integer({ min: 0, max: 19 }) }), { minLength: 2, maxLength: 8 }),
  allScoped: fc.boolean(),
  primary: fc.integer({ min: -1, max: 7 }),
  L: fc.constantFrom(0.5, 0.97, 0.97, 1),
  T: fc.constantFrom(1, 15 * MIN, 15 * MIN, HOUR),
  allowOverage: fc.boolean(),
  family: fc.constantFrom<string | undefined>('sonnet', 'sonnet', 'sonnet', 'opus', undefined),
  now: fc.constantFrom(NOW, NOW, NOW + 10 * MIN),
  permutationSeed: fc.integer(),
});

type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

function candidates(sc: Scenario): RankCandidate[] {
  return sc.accounts.map(({ snap, cooldown, signIn }, index) => ({
    id: `acct${index}`,
    index,
    isPrimary: index === sc.primary,
    metrics: computeMetrics(
      { snapshot: toSnapshot(snap, sc.allScoped), cooldown, needsSignIn: signIn === 0 },
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
          assert.deepEqual(
            again.order.map((c) => c.id),
            base.order.map((c) => c.id),
          );
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
