import { strict as assert } from 'node:assert';
import { headerAnomalies, lowerCaseHeaders, parseUnifiedHeaders } from '../../src/quota/headers';

const OBS = Date.UTC(2025, 10, 4, 0, 0, 0);
const R5 = 1762232400; // OBS + 5h, epoch seconds
const R7 = 1762732800; // a few days later
const P = 'anthropic-ratelimit-unified-';

/** A realistic 200 response's headers. */
function full(): Record<string, string> {
  return {
    'content-type': 'application/json',
    [`${P}status`]: 'allowed',
    [`${P}reset`]: String(R5),
    [`${P}representative-claim`]: 'five_hour',
    [`${P}5h-status`]: 'allowed',
    [`${P}5h-utilization`]: '0.42',
    [`${P}5h-reset`]: String(R5),
    [`${P}7d-status`]: 'allowed_warning',
    [`${P}7d-utilization`]: '0.81',
    [`${P}7d-reset`]: String(R7),
    [`${P}fallback`]: 'available',
    [`${P}fallback-percentage`]: '0.5',
  };
}

describe('quota/headers parseUnifiedHeaders', () => {
  it('parses a full 200 response into fractions and epoch ms', () => {
    assert.deepEqual(parseUnifiedHeaders(full(), OBS), {
      observedAtMs: OBS,
      source: 'headers',
      unifiedStatus: 'allowed',
      unifiedResetAtMs: R5 * 1000,
      representativeClaim: 'five_hour',
      session: { status: 'allowed', utilization: 0.42, resetAtMs: R5 * 1000 },
      weekly: { status: 'allowed_warning', utilization: 0.81, resetAtMs: R7 * 1000 },
      scoped: {},
    });
  });

  it('returns undefined when no unified header is present', () => {
    assert.equal(parseUnifiedHeaders({}, OBS), undefined);
    assert.equal(parseUnifiedHeaders({ 'retry-after': '30', 'anthropic-ratelimit-requests-remaining': '5' }, OBS), undefined);
  });

  it('returns a snapshot even when only an unparsed unified header is present', () => {
    assert.deepEqual(parseUnifiedHeaders({ [`${P}fallback`]: 'available' }, OBS), {
      observedAtMs: OBS,
      source: 'headers',
      scoped: {},
    });
  });

  it('accepts header names in any case', () => {
    const snap = parseUnifiedHeaders(
      { 'Anthropic-RateLimit-Unified-5h-Utilization': '0.3', 'ANTHROPIC-RATELIMIT-UNIFIED-STATUS': 'Rejected', 'anthropic-ratelimit-unified-7D-Reset': '1800000000' },
      OBS,
    );
    assert.equal(snap?.session?.utilization, 0.3);
    assert.equal(snap?.unifiedStatus, 'rejected');
    assert.equal(snap?.weekly?.resetAtMs, 1_800_000_000_000, 'a lower-case prefix with a mixed-case rest');
  });

  it('takes the first element of array values and skips empty arrays', () => {
    const snap = parseUnifiedHeaders({ [`${P}5h-utilization`]: ['0.1', '0.9'], [`${P}7d-utilization`]: [] }, OBS);
    assert.equal(snap?.session?.utilization, 0.1);
    assert.equal(snap?.weekly, undefined);
  });

  it('keeps utilisation as a fraction: 0.01 stays 1 %, never re-read as percent', () => {
    const snap = parseUnifiedHeaders({ [`${P}5h-utilization`]: '0.01', [`${P}7d-utilization`]: '1' }, OBS);
    assert.equal(snap?.session?.utilization, 0.01);
    assert.equal(snap?.weekly?.utilization, 1);
  });

  it('keeps a value above 1.5 and reports it as an anomaly', () => {
    const h = { [`${P}5h-utilization`]: '42' };
    assert.equal(parseUnifiedHeaders(h, OBS)?.session?.utilization, 42);
    const notes = headerAnomalies(h);
    assert.equal(notes.length, 1);
    assert.match(notes[0], /5h-utilization.*42/);
  });

  it('keeps a utilisation slightly above 1 without an anomaly', () => {
    const h = { [`${P}5h-utilization`]: '1.04' };
    assert.equal(parseUnifiedHeaders(h, OBS)?.session?.utilization, 1.04);
    assert.deepEqual(headerAnomalies(h), []);
  });

  for (const bad of ['', 'NaN', 'abc', '-0.2', '42%', '0,5', 'Infinity']) {
    it(`leaves utilisation ${JSON.stringify(bad)} absent and flags it`, () => {
      const h = { [`${P}5h-utilization`]: bad, [`${P}5h-status`]: 'allowed' };
      assert.deepEqual(parseUnifiedHeaders(h, OBS)?.session, { status: 'allowed' });
      assert.equal(headerAnomalies(h).length, 1);
    });
  }

  it('drops unparseable resets and flags them', () => {
    const h = { [`${P}5h-reset`]: 'soon', [`${P}reset`]: '-1', [`${P}5h-status`]: 'allowed' };
    const snap = parseUnifiedHeaders(h, OBS);
    assert.equal(snap?.unifiedResetAtMs, undefined);
    assert.deepEqual(snap?.session, { status: 'allowed' });
    assert.equal(headerAnomalies(h).length, 2);
  });

  it('accepts a reset already in milliseconds and an ISO reset', () => {
    const snap = parseUnifiedHeaders({ [`${P}5h-reset`]: String(R5 * 1000), [`${P}7d-reset`]: '2025-11-10T00:00:00Z' }, OBS);
    assert.equal(snap?.session?.resetAtMs, R5 * 1000);
    assert.equal(snap?.weekly?.resetAtMs, Date.UTC(2025, 10, 10));
  });

  it('normalises statuses to trimmed lower case and keeps unknown ones', () => {
    const snap = parseUnifiedHeaders({ [`${P}5h-status`]: ' Allowed_Warning ', [`${P}7d-status`]: 'mystery' }, OBS);
    assert.equal(snap?.session?.status, 'allowed_warning');
    assert.equal(snap?.weekly?.status, 'mystery');
  });

  it('parses model-scoped 7d_<family> windows keyed by lower-case family', () => {
    const snap = parseUnifiedHeaders(
      {
        [`${P}7d_sonnet-status`]: 'rejected',
        [`${P}7d_sonnet-utilization`]: '1.0',
        [`${P}7d_sonnet-reset`]: String(R7),
        'Anthropic-Ratelimit-Unified-7d_Opus-Utilization': '0.25',
        [`${P}7d_oi-status`]: 'allowed',
      },
      OBS,
    );
    assert.deepEqual(snap?.scoped, {
      sonnet: { status: 'rejected', utilization: 1, resetAtMs: R7 * 1000, observedAtMs: OBS },
      opus: { utilization: 0.25, observedAtMs: OBS },
      oi: { status: 'allowed', observedAtMs: OBS },
    });
    assert.equal(snap?.weekly, undefined, '7d_sonnet must not leak into the 7d window');
  });

  it('omits a scoped window none of whose fields parse, and never keys __proto__', () => {
    const snap = parseUnifiedHeaders({ [`${P}7d_opus-utilization`]: 'x', [`${P}7d___proto__-status`]: 'rejected', [`${P}7d_constructor-status`]: 'allowed' }, OBS);
    assert.deepEqual(Object.keys(snap!.scoped), ['constructor']);
    assert.equal(Object.getPrototypeOf(snap!.scoped), Object.prototype);
  });

  it('parses overage headers', () => {
    const snap = parseUnifiedHeaders(
      {
        [`${P}status`]: 'rejected',
        [`${P}overage-status`]: 'allowed',
        [`${P}overage-reset`]: String(R7),
        [`${P}overage-utilization`]: '0.1',
        [`${P}overage-in-use`]: 'TRUE',
        [`${P}overage-disabled-reason`]: '  ',
      },
      OBS,
    );
    assert.deepEqual(snap?.overage, { status: 'allowed', resetAtMs: R7 * 1000, utilization: 0.1, inUse: true });
  });

  it('parses an overage disabled reason and in-use false; drops an unknown boolean', () => {
    const a = parseUnifiedHeaders({ [`${P}overage-status`]: 'rejected', [`${P}overage-disabled-reason`]: 'out_of_credits', [`${P}overage-in-use`]: 'false' }, OBS);
    assert.deepEqual(a?.overage, { status: 'rejected', inUse: false, disabledReason: 'out_of_credits' });
    const b = parseUnifiedHeaders({ [`${P}overage-in-use`]: 'maybe' }, OBS);
    assert.equal(b?.overage, undefined);
  });

  it('tolerates non-object header bags and non-string values', () => {
    assert.equal(parseUnifiedHeaders(null as never, OBS), undefined);
    assert.equal(parseUnifiedHeaders('x' as never, OBS), undefined);
    const snap = parseUnifiedHeaders({ [`${P}5h-reset`]: R5 as never, [`${P}status`]: { a: 1 } as never }, OBS);
    assert.equal(snap?.session?.resetAtMs, R5 * 1000);
    assert.equal(snap?.unifiedStatus, undefined);
  });
});

describe('quota/headers lowerCaseHeaders', () => {
  it('the first spelling of a name wins', () => {
    const h = lowerCaseHeaders({ 'Retry-After': '5', 'retry-after': '9' });
    assert.equal(h.get('retry-after'), '5');
  });
});
