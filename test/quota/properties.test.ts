import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { classifyResponse } from '../../src/quota/classify';
import { MAX_EPOCH_MS, WINDOW_EXHAUSTED_CEILING_MS } from '../../src/quota/constants';
import { mergeCooldown, planCooldown } from '../../src/quota/cooldown';
import { isFamilyKey } from '../../src/quota/family';
import { headerAnomalies, parseUnifiedHeaders, UnifiedHeaderReader } from '../../src/quota/headers';
import { LearnedCosts } from '../../src/quota/learnedCosts';
import { mergeByRules, mergeSnapshot } from '../../src/quota/merge';
import { parseResetMs, parseRetryAfterMs } from '../../src/quota/time';
import type { Cooldown, CooldownReason, QuotaSnapshot, QuotaWindow, ResponseClass } from '../../src/quota/types';
import { parseUsagePayload } from '../../src/quota/usage';

const NOW = Date.UTC(2025, 10, 4, 0, 0, 0);
const RUNS = { numRuns: 500, seed: 20261130 };

// ---- invariants every parsed snapshot must satisfy -------------------------------------------

function assertResetMs(v: number | undefined, where: string): void {
  if (v === undefined) return;
  assert.ok(Number.isInteger(v) && v > 0 && v <= MAX_EPOCH_MS, `${where}: bad reset ${v}`);
}

function assertWindow(w: QuotaWindow | undefined, where: string): void {
  if (w === undefined) return;
  assert.ok(Object.keys(w).length > 0, `${where}: empty window`);
  if (w.utilization !== undefined) assert.ok(Number.isFinite(w.utilization) && w.utilization >= 0, `${where}: utilization ${w.utilization}`);
  assertResetMs(w.resetAtMs, where);
  if (w.status !== undefined) assert.ok(w.status !== '' && w.status === w.status.trim().toLowerCase(), `${where}: status ${w.status}`);
  if (w.observedAtMs !== undefined) assert.ok(Number.isFinite(w.observedAtMs), `${where}: observedAtMs`);
}

function assertSnapshot(s: QuotaSnapshot): void {
  assert.ok(Number.isFinite(s.observedAtMs));
  assert.ok(s.source === 'headers' || s.source === 'usage');
  assertResetMs(s.unifiedResetAtMs, 'unified');
  assertWindow(s.session, 'session');
  assertWindow(s.weekly, 'weekly');
  assert.equal(Object.getPrototypeOf(s.scoped), Object.prototype);
  for (const [family, w] of Object.entries(s.scoped)) {
    assert.ok(isFamilyKey(family), `family key ${family}`);
    assertWindow(w, `scoped.${family}`);
    assert.ok(Number.isFinite(w.observedAtMs));
  }
  if (s.overage) {
    if (s.overage.utilization !== undefined) assert.ok(Number.isFinite(s.overage.utilization) && s.overage.utilization >= 0);
    assertResetMs(s.overage.resetAtMs, 'overage');
    if (s.overage.inUse !== undefined) assert.equal(typeof s.overage.inUse, 'boolean');
  }
  for (const v of Object.values(s)) assert.notEqual(v, undefined, 'no undefined-valued keys');
}

// ---- arbitraries ----------------------------------------------------------------------------

const SUFFIXES = [
  'status',
  'reset',
  'representative-claim',
  '5h-status',
  '5h-utilization',
  '5h-reset',
  '7d-status',
  '7d-utilization',
  '7d-reset',
  '7d_sonnet-status',
  '7d_sonnet-utilization',
  '7d_sonnet-reset',
  '7d_opus-utilization',
  '7d_Oi-status',
  '7d___proto__-status',
  '7d_-reset',
  'overage-status',
  'overage-reset',
  'overage-utilization',
  'overage-in-use',
  'overage-disabled-reason',
  'fallback',
  'fallback-percentage',
];
/** A real header name in random case, or an arbitrary string. */
const headerName = fc.oneof(
  fc.tuple(fc.constantFrom(...SUFFIXES), fc.boolean()).map(([s, upper]) => {
    const name = `anthropic-ratelimit-unified-${s}`;
    return upper ? name.toUpperCase() : name;
  }),
  fc.constantFrom('retry-after', 'anthropic-ratelimit-requests-remaining', '__proto__', 'constructor'),
  fc.string(),
);
/** Values a header could plausibly (or implausibly) carry. */
const scalarValue = fc.oneof(
  fc.constantFrom(
    'allowed',
    'allowed_warning',
    'rejected',
    'throttled',
    'REJECTED ',
    '',
    ' ',
    'NaN',
    '-1',
    '0',
    'true',
    'Infinity',
    '1e400',
    '0x10',
    '2025-11-04T05:00:00Z',
    'Tue, 04 Nov 2025 05:00:00 GMT',
    'Error 1',
    '1762232400',
  ),
  fc.double().map(String),
  fc.integer().map(String),
  fc.nat({ max: 5_000_000_000 }).map(String),
  fc.string(),
);
const headerValue = fc.oneof(scalarValue, fc.array(scalarValue, { maxLength: 3 }), fc.constant(undefined));
const headerBag = fc.dictionary(headerName, headerValue, { maxKeys: 12 });

/** Arbitrary objects shaped roughly like usage payloads, plus arbitrary JSON. */
const percentish = fc.oneof(fc.double(), fc.integer({ min: -10, max: 200 }), fc.string(), fc.constant(null), fc.jsonValue());
const resetish = fc.oneof(fc.constant(null), fc.constantFrom('2025-11-04T04:59:59.943648+00:00', 'garbage', ''), fc.string(), fc.double());
const windowish = fc.oneof(fc.constant(null), fc.record({ utilization: percentish, resets_at: resetish }, { requiredKeys: [] }), fc.jsonValue());
const usageish = fc.oneof(
  fc.jsonValue(),
  fc.record(
    {
      five_hour: windowish,
      seven_day: windowish,
      seven_day_sonnet: windowish,
      seven_day_opus: windowish,
      seven_day_oauth_apps: windowish,
      extra_usage: fc.oneof(fc.record({ is_enabled: fc.oneof(fc.boolean(), fc.jsonValue()), utilization: percentish }), fc.jsonValue()),
      limits: fc.array(
        fc.oneof(
          fc.record({
            kind: fc.oneof(fc.constantFrom('session', 'weekly_all', 'weekly_scoped'), fc.string()),
            percent: percentish,
            resets_at: resetish,
            scope: fc.oneof(
              fc.record({ model: fc.record({ display_name: fc.oneof(fc.constantFrom('Sonnet', 'Claude Opus 4.1', '', '__proto__'), fc.string()) }) }),
              fc.jsonValue(),
            ),
          }),
          fc.jsonValue(),
        ),
        { maxLength: 5 },
      ),
    },
    { requiredKeys: [] },
  ),
);

/** A printable description of any value (String() throws on e.g. `{toString: 0}`). */
function show(v: unknown): string {
  try {
    return JSON.stringify(v) ?? typeof v;
  } catch {
    return typeof v;
  }
}

// ---- properties -----------------------------------------------------------------------------

describe('quota properties (fast-check)', () => {
  it('parseResetMs never throws and yields a positive integer epoch ms or undefined', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.string(), fc.double(), scalarValue), (v) => {
        assertResetMs(parseResetMs(v), show(v));
      }),
      RUNS,
    );
  });

  it('parseRetryAfterMs never throws and yields a finite ms ≥ 0 or undefined', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), scalarValue), fc.integer({ min: 0, max: 4e12 }), (v, now) => {
        const ms = parseRetryAfterMs(v, now);
        if (ms !== undefined) assert.ok(Number.isFinite(ms) && ms >= 0, `${v} → ${ms}`);
      }),
      RUNS,
    );
  });

  it('header epoch seconds round-trip to ms exactly', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4_100_000_000 }), (s) => {
        assert.equal(parseResetMs(String(s)), s * 1000);
      }),
      RUNS,
    );
  });

  it('header utilisation is read as the same fraction it was written', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 3, noNaN: true }), (f) => {
        const snap = parseUnifiedHeaders({ 'anthropic-ratelimit-unified-5h-utilization': String(f) }, NOW);
        assert.equal(snap?.session?.utilization, f === 0 ? 0 : f);
        assert.equal(headerAnomalies({ 'anthropic-ratelimit-unified-5h-utilization': String(f) }).length, f > 1.5 ? 1 : 0);
      }),
      RUNS,
    );
  });

  it('usage percent is always divided by 100', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1000, noNaN: true }), (p) => {
        const snap = parseUsagePayload({ five_hour: { utilization: p, resets_at: null } }, NOW);
        assert.equal(snap?.session?.utilization, p / 100);
      }),
      RUNS,
    );
  });

  it('parseUnifiedHeaders never throws on arbitrary header bags and yields only valid fields', () => {
    fc.assert(
      fc.property(headerBag, (h) => {
        const snap = parseUnifiedHeaders(h, NOW);
        headerAnomalies(h);
        if (snap) {
          assertSnapshot(snap);
          assert.equal(snap.source, 'headers');
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('parseUsagePayload never throws on arbitrary JSON and yields only valid fields', () => {
    fc.assert(
      fc.property(usageish, (json) => {
        const snap = parseUsagePayload(json, NOW);
        if (snap) {
          assertSnapshot(snap);
          assert.equal(snap.source, 'usage');
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('parseUsagePayload never throws on anything at all', () => {
    fc.assert(
      fc.property(fc.anything(), (v) => void parseUsagePayload(v, NOW)),
      RUNS,
    );
  });

  it('mergeSnapshot of arbitrary parsed snapshots is valid and never throws', () => {
    const snapArb = fc.oneof(
      fc.tuple(headerBag, fc.integer({ min: 0, max: 3_600_000 })).map(([h, d]) => parseUnifiedHeaders(h, NOW + d)),
      fc.tuple(usageish, fc.integer({ min: 0, max: 3_600_000 })).map(([j, d]) => parseUsagePayload(j, NOW + d)),
    );
    fc.assert(
      fc.property(snapArb, snapArb, (a, b) => {
        if (!b) return;
        const out = mergeSnapshot(a, b);
        assertSnapshot(out);
        assert.equal(out.observedAtMs, Math.max(a?.observedAtMs ?? -Infinity, b.observedAtMs));
      }),
      RUNS,
    );
  });

  /** A realistic answer's unified headers, with `used` as its 5-hour utilisation (and a scoped window when asked). */
  const answerHeaders = (used: string, scoped: boolean): Record<string, string> => ({
    'anthropic-ratelimit-unified-status': 'allowed',
    'anthropic-ratelimit-unified-reset': '1762232400',
    'anthropic-ratelimit-unified-representative-claim': 'five_hour',
    'anthropic-ratelimit-unified-5h-status': 'allowed',
    'anthropic-ratelimit-unified-5h-utilization': used,
    'anthropic-ratelimit-unified-5h-reset': '1762232400',
    'anthropic-ratelimit-unified-7d-status': 'allowed',
    'anthropic-ratelimit-unified-7d-utilization': '0.4',
    'anthropic-ratelimit-unified-7d-reset': '1762750800',
    ...(scoped ? { 'anthropic-ratelimit-unified-7d_opus-utilization': '0.2', 'anthropic-ratelimit-unified-7d_opus-reset': '1762750800' } : {}),
  });
  /** A few answers' headers that repeat one another (as a busy account's do), and arbitrary bags. */
  const bagPool = fc
    .tuple(fc.constantFrom('0.1', '0.1', '0.1', '0.2'), fc.boolean(), headerBag)
    .map(([used, scoped, odd]) => [answerHeaders('0.1', false), answerHeaders(used, scoped), odd]);
  /** Evidence in time order: which pool entry (3 = a usage reading), after how long (up to 20 min, so carried groups go stale). */
  const steps = fc.array(fc.tuple(fc.nat(3), fc.integer({ min: 0, max: 20 * 60_000 }), fc.nat(2)), { minLength: 1, maxLength: 25 });

  it('the header reader gives what parseUnifiedHeaders gives, answer after answer, repeated or not', () => {
    fc.assert(
      fc.property(bagPool, steps, (pool, seq) => {
        const reader = new UnifiedHeaderReader();
        let t = NOW;
        for (const [pick, dt, account] of seq) {
          t += dt;
          const bag = pool[pick % 3];
          assert.deepEqual(reader.read(`a${account}`, bag, t), parseUnifiedHeaders(bag, t));
        }
      }),
      RUNS,
    );
  });

  it('mergeSnapshot folds evidence into what the rules applied in full give, repeats included', () => {
    fc.assert(
      fc.property(bagPool, usageish, steps, (pool, usage, seq) => {
        const reader = new UnifiedHeaderReader();
        let quick: QuotaSnapshot | undefined;
        let full: QuotaSnapshot | undefined;
        let t = NOW;
        for (const [pick, dt] of seq) {
          t += dt;
          const next = pick === 3 ? parseUsagePayload(usage, t) : reader.read('a', pool[pick], t);
          if (!next) continue;
          quick = mergeSnapshot(quick, next);
          full = full === undefined ? next : mergeByRules(full, next);
          assert.deepEqual(quick, full);
        }
      }),
      RUNS,
    );
  });

  it('an answer that repeats the last one keeps the snapshot it merges into, at the new time', () => {
    const reader = new UnifiedHeaderReader();
    const first = mergeSnapshot(undefined, reader.read('a', answerHeaders('0.1', false), NOW)!);
    const again = mergeSnapshot(first, reader.read('a', answerHeaders('0.1', false), NOW + 1_000)!);
    assert.equal(again.observedAtMs, NOW + 1_000);
    assert.equal(again.session, first.session);
    assert.equal(again.weekly, first.weekly);
    const moved = mergeSnapshot(again, reader.read('a', answerHeaders('0.12', false), NOW + 2_000)!);
    assert.equal(moved.session?.utilization, 0.12);
  });

  it('learned costs skip a repeated observation exactly: the same learners as observing every answer afresh', () => {
    fc.assert(
      fc.property(bagPool, usageish, steps, fc.array(fc.nat(50_000), { minLength: 25, maxLength: 25 }), (pool, usage, seq, tokens) => {
        const reader = new UnifiedHeaderReader();
        const skipping = new LearnedCosts();
        const afresh = new LearnedCosts();
        let t = NOW;
        seq.forEach(([pick, dt], i) => {
          t += dt;
          const served = { inputTokens: tokens[i], cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 10 };
          skipping.served('a', served);
          afresh.served('a', served);
          const next = pick === 3 ? parseUsagePayload(usage, t) : reader.read('a', pool[pick], t);
          if (!next) return;
          skipping.observe('a', next);
          // A deep copy shares no window object with an earlier snapshot: every observation is looked at.
          afresh.observe('a', structuredClone(next));
          assert.deepEqual(skipping.toSaved(), afresh.toSaved());
        });
      }),
      RUNS,
    );
  });

  it('classifyResponse never throws and returns sane numbers', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.constantFrom(200, 401, 403, 429, 500, 529), fc.integer({ min: -1, max: 700 })),
        headerBag,
        fc.option(
          fc.oneof(
            fc.string(),
            fc.jsonValue().map((j) => JSON.stringify(j)),
          ),
        ),
        fc.option(fc.string()),
        (status, headers, body, model) => {
          const cls = classifyResponse({ status, headers, body: body ?? undefined, nowMs: NOW, model: model ?? undefined });
          if (cls.kind === 'window_exhausted') {
            assert.ok(Number.isFinite(cls.untilMs) && cls.untilMs > NOW);
            assert.ok(cls.windows.length > 0);
          }
          if (cls.kind === 'model_scoped_exhausted') {
            assert.ok(isFamilyKey(cls.family));
            if (cls.untilMs !== undefined) assert.ok(cls.untilMs > NOW);
          }
          if ('retryAfterMs' in cls && cls.retryAfterMs !== undefined) assert.ok(Number.isFinite(cls.retryAfterMs) && cls.retryAfterMs >= 0);
          if (status >= 200 && status <= 299) assert.equal(cls.kind, 'success');
        },
      ),
      { numRuns: 1000 },
    );
  });

  const reasonArb = fc.constantFrom<CooldownReason>('window_exhausted', 'throttle', 'overloaded', 'forbidden', 'server_error', 'needs_sign_in');
  const cooldownArb: fc.Arbitrary<Cooldown> = fc.record({
    untilMs: fc.integer({ min: NOW - 1e6, max: NOW + 1e10 }),
    reason: reasonArb,
    setAtMs: fc.integer({ min: NOW - 1e6, max: NOW + 1e6 }),
  });

  it('mergeCooldown never shortens a cooldown', () => {
    fc.assert(
      fc.property(fc.option(cooldownArb, { nil: undefined }), cooldownArb, (a, b) => {
        const out = mergeCooldown(a, b);
        assert.equal(out.untilMs, Math.max(a?.untilMs ?? -Infinity, b.untilMs));
        assert.ok(out.untilMs >= (a?.untilMs ?? -Infinity));
      }),
      RUNS,
    );
  });

  it('planCooldown stays within [now, now + 8 days] for any class', () => {
    const ms = fc.oneof(fc.double(), fc.integer({ min: -1e12, max: 1e13 }));
    const clsArb: fc.Arbitrary<ResponseClass> = fc.oneof(
      fc.record({ kind: fc.constant('window_exhausted' as const), untilMs: ms, windows: fc.array(fc.constantFrom('5h', '7d', 'unified')) }),
      fc.record({ kind: fc.constant('throttle' as const), retryAfterMs: ms }),
      fc.record({ kind: fc.constant('overloaded' as const), retryAfterMs: fc.option(ms, { nil: undefined }) }),
      fc.record({ kind: fc.constant('server_error' as const), retryAfterMs: fc.option(ms, { nil: undefined }) }),
      fc.constantFrom<ResponseClass>({ kind: 'forbidden' }, { kind: 'success' }, { kind: 'request_scoped' }),
    );
    fc.assert(
      fc.property(clsArb, (cls) => {
        const c = planCooldown(cls, NOW);
        if (!c) return;
        assert.ok(Number.isFinite(c.untilMs) && c.untilMs >= NOW && c.untilMs <= NOW + WINDOW_EXHAUSTED_CEILING_MS, `${JSON.stringify(cls)} → ${c.untilMs}`);
        assert.equal(c.setAtMs, NOW);
      }),
      RUNS,
    );
  });
});
