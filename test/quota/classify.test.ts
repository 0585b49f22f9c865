import { strict as assert } from 'node:assert';
import { classifyResponse, classifyStreamError, errorTypeOf } from '../../src/quota/classify';
import { DEFAULT_THROTTLE_MS, WINDOW_EXHAUSTED_FALLBACK_MS } from '../../src/quota/constants';
import { planScopedCooldown, scopedCooldownClearedBy } from '../../src/quota/scopedCooldown';
import type { QuotaSnapshot } from '../../src/quota/types';

const NOW = Date.UTC(2025, 10, 4, 0, 0, 0);
const S = (ms: number): string => String(Math.floor(ms / 1000));
const H5 = NOW + 2 * 3600_000; // 5h reset, 2 h from now
const D7 = NOW + 3 * 86400_000; // 7d reset, 3 days from now
const P = 'anthropic-ratelimit-unified-';
const RATE_LIMIT_BODY = '{"type":"error","error":{"type":"rate_limit_error","message":"Error"}}';

describe('quota/classify classifyResponse', () => {
  it('2xx → success, even when the headers say rejected (served as overage)', () => {
    for (const status of [200, 201, 299]) {
      assert.deepEqual(classifyResponse({ status, headers: { [`${P}status`]: 'rejected', [`${P}overage-in-use`]: 'true' }, nowMs: NOW }), {
        kind: 'success',
      });
    }
  });

  it('a real-looking exhausted 429 with only per-window headers → window_exhausted until the 5h reset', () => {
    const cls = classifyResponse({
      status: 429,
      headers: {
        'Anthropic-Ratelimit-Unified-5h-Status': 'rejected',
        'Anthropic-Ratelimit-Unified-5h-Reset': S(H5),
        'Anthropic-Ratelimit-Unified-5h-Utilization': '1.02',
        'Anthropic-Ratelimit-Unified-7d-Status': 'allowed',
        'Anthropic-Ratelimit-Unified-7d-Reset': S(D7),
      },
      body: RATE_LIMIT_BODY,
      nowMs: NOW,
    });
    assert.deepEqual(cls, { kind: 'window_exhausted', untilMs: Math.floor(H5 / 1000) * 1000, windows: ['5h'] });
  });

  it('both 5h and 7d rejected → untilMs is the LATEST reset, both named', () => {
    const cls = classifyResponse({
      status: 429,
      headers: { [`${P}5h-status`]: 'rejected', [`${P}5h-reset`]: S(H5), [`${P}7d-status`]: 'rejected', [`${P}7d-reset`]: S(D7) },
      nowMs: NOW,
    });
    assert.deepEqual(cls, { kind: 'window_exhausted', untilMs: Math.floor(D7 / 1000) * 1000, windows: ['5h', '7d'] });
  });

  it('an account-wide rejected unified status adds its (later) reset to the rejected windows', () => {
    const cls = classifyResponse({
      status: 429,
      headers: {
        [`${P}status`]: 'rejected',
        [`${P}representative-claim`]: 'seven_day',
        [`${P}reset`]: S(D7),
        [`${P}5h-status`]: 'rejected',
        [`${P}5h-reset`]: S(H5),
      },
      nowMs: NOW,
    });
    assert.deepEqual(cls, { kind: 'window_exhausted', untilMs: Math.floor(D7 / 1000) * 1000, windows: ['5h'] });
  });

  it('a 429 with both retry-after and a rejected window → window_exhausted, not throttle', () => {
    const cls = classifyResponse({
      status: 429,
      headers: { 'retry-after': '30', [`${P}7d-status`]: 'rejected', [`${P}7d-reset`]: S(D7), [`${P}status`]: 'rejected' },
      nowMs: NOW,
    });
    assert.equal(cls.kind, 'window_exhausted');
    assert.deepEqual(cls.kind === 'window_exhausted' && cls.windows, ['7d']);
  });

  it('only the unified status rejected → window_exhausted ["unified"] until the unified reset', () => {
    const cls = classifyResponse({
      status: 429,
      headers: { [`${P}status`]: 'rejected', [`${P}reset`]: S(H5), [`${P}representative-claim`]: 'five_hour' },
      nowMs: NOW,
    });
    assert.deepEqual(cls, { kind: 'window_exhausted', untilMs: Math.floor(H5 / 1000) * 1000, windows: ['unified'] });
  });

  it('a rejected window with no reset → now + 10 min', () => {
    const cls = classifyResponse({ status: 429, headers: { [`${P}5h-status`]: 'rejected' }, nowMs: NOW });
    assert.deepEqual(cls, { kind: 'window_exhausted', untilMs: NOW + WINDOW_EXHAUSTED_FALLBACK_MS, windows: ['5h'] });
  });

  it('a rejected window whose reset is in the past (or now) → now + 10 min', () => {
    for (const reset of [S(NOW - 60_000), S(NOW)]) {
      const cls = classifyResponse({ status: 429, headers: { [`${P}status`]: 'rejected', [`${P}reset`]: reset }, nowMs: NOW });
      assert.deepEqual(cls, { kind: 'window_exhausted', untilMs: NOW + WINDOW_EXHAUSTED_FALLBACK_MS, windows: ['unified'] });
    }
  });

  it('a throttled 5h status counts as a rejection', () => {
    const cls = classifyResponse({ status: 429, headers: { [`${P}5h-status`]: 'Throttled', [`${P}5h-reset`]: S(H5) }, nowMs: NOW });
    assert.equal(cls.kind, 'window_exhausted');
  });

  it('only a 7d_<family> window rejected → model_scoped_exhausted, no account-wide cooldown', () => {
    const cls = classifyResponse({
      status: 429,
      headers: {
        [`${P}status`]: 'rejected',
        [`${P}representative-claim`]: 'seven_day_sonnet',
        [`${P}reset`]: S(D7),
        [`${P}5h-status`]: 'allowed',
        [`${P}7d-status`]: 'allowed',
        [`${P}7d_sonnet-status`]: 'rejected',
        [`${P}7d_sonnet-reset`]: S(D7),
      },
      nowMs: NOW,
      model: 'claude-sonnet-4-5-20250929',
    });
    assert.deepEqual(cls, { kind: 'model_scoped_exhausted', family: 'sonnet', untilMs: Math.floor(D7 / 1000) * 1000 });
  });

  it('model-scoped: prefers the requested model family when several are rejected', () => {
    const headers = { [`${P}7d_opus-status`]: 'rejected', [`${P}7d_sonnet-status`]: 'rejected', [`${P}7d_sonnet-reset`]: S(D7) };
    assert.deepEqual(classifyResponse({ status: 429, headers, nowMs: NOW, model: 'claude-sonnet-4-5' }), {
      kind: 'model_scoped_exhausted',
      family: 'sonnet',
      untilMs: Math.floor(D7 / 1000) * 1000,
    });
    assert.deepEqual(classifyResponse({ status: 429, headers, nowMs: NOW, model: 'claude-opus-4-1' }), {
      kind: 'model_scoped_exhausted',
      family: 'opus',
    });
  });

  it('unified rejected with a seven_day_<family> claim and no scoped headers → model_scoped_exhausted', () => {
    const cls = classifyResponse({
      status: 429,
      headers: { [`${P}status`]: 'rejected', [`${P}representative-claim`]: 'seven_day_opus', [`${P}reset`]: S(D7) },
      nowMs: NOW,
    });
    assert.deepEqual(cls, { kind: 'model_scoped_exhausted', family: 'opus', untilMs: Math.floor(D7 / 1000) * 1000 });
  });

  it('a rejected 5h window beats a rejected scoped window', () => {
    const cls = classifyResponse({
      status: 429,
      headers: { [`${P}5h-status`]: 'rejected', [`${P}5h-reset`]: S(H5), [`${P}7d_sonnet-status`]: 'rejected' },
      nowMs: NOW,
    });
    assert.equal(cls.kind, 'window_exhausted');
  });

  it('retry-after without a rejected window → throttle', () => {
    const cls = classifyResponse({
      status: 429,
      headers: { 'Retry-After': '7', [`${P}status`]: 'allowed', [`${P}5h-status`]: 'allowed' },
      body: RATE_LIMIT_BODY,
      nowMs: NOW,
    });
    assert.deepEqual(cls, { kind: 'throttle', retryAfterMs: 7000 });
  });

  it('retry-after alone (no rate-limit headers) → throttle', () => {
    assert.deepEqual(classifyResponse({ status: 429, headers: { 'retry-after': ['2', '9'] }, nowMs: NOW }), {
      kind: 'throttle',
      retryAfterMs: 2000,
    });
  });

  it('a header-less 429 → request_scoped', () => {
    assert.deepEqual(classifyResponse({ status: 429, headers: { 'content-type': 'application/json' }, body: RATE_LIMIT_BODY, nowMs: NOW }), {
      kind: 'request_scoped',
    });
  });

  it('a 429 with a garbage retry-after and no rate-limit headers → request_scoped', () => {
    assert.deepEqual(classifyResponse({ status: 429, headers: { 'retry-after': 'soon' }, nowMs: NOW }), { kind: 'request_scoped' });
  });

  it('a 429 whose rate-limit headers say allowed, with no retry-after → concurrency_throttle (no cooldown)', () => {
    for (const headers of [{ [`${P}status`]: 'allowed' }, { [`${P}5h-status`]: 'allowed_warning', [`${P}7d-status`]: 'allowed' }]) {
      assert.deepEqual(classifyResponse({ status: 429, headers, nowMs: NOW }), { kind: 'concurrency_throttle' }, JSON.stringify(headers));
    }
  });

  it('a 429 with rate-limit headers that say nothing allowed, and no retry-after → throttle with the default', () => {
    for (const headers of [{ [`${P}5h-utilization`]: '0.4' }, { [`${P}status`]: 'unknown_value', [`${P}5h-status`]: 'allowed' }]) {
      assert.deepEqual(classifyResponse({ status: 429, headers, nowMs: NOW }), { kind: 'throttle', retryAfterMs: DEFAULT_THROTTLE_MS }, JSON.stringify(headers));
    }
  });

  it('an entitlement 429 → entitlement, even with rejected-looking headers', () => {
    const body = '{"type":"error","error":{"type":"rate_limit_error","message":"Extra usage is required for long context requests."}}';
    assert.deepEqual(classifyResponse({ status: 429, headers: {}, body, nowMs: NOW }), { kind: 'entitlement' });
    assert.deepEqual(classifyResponse({ status: 429, headers: { [`${P}status`]: 'rejected', 'retry-after': '5' }, body, nowMs: NOW }), {
      kind: 'entitlement',
    });
  });

  it('529 → overloaded, with retry-after when given', () => {
    assert.deepEqual(classifyResponse({ status: 529, headers: {}, nowMs: NOW }), { kind: 'overloaded' });
    assert.deepEqual(classifyResponse({ status: 529, headers: { 'retry-after': '3' }, nowMs: NOW }), { kind: 'overloaded', retryAfterMs: 3000 });
  });

  it('an overloaded_error body on another status → overloaded', () => {
    const body = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}';
    assert.deepEqual(classifyResponse({ status: 500, headers: {}, body, nowMs: NOW }), { kind: 'overloaded' });
  });

  it('401 → unauthorized, 403 → forbidden', () => {
    assert.deepEqual(classifyResponse({ status: 401, headers: {}, nowMs: NOW }), { kind: 'unauthorized' });
    assert.deepEqual(classifyResponse({ status: 403, headers: {}, body: '{"error":{"type":"permission_error"}}', nowMs: NOW }), {
      kind: 'forbidden',
    });
  });

  it('5xx → server_error, with retry-after when given', () => {
    for (const status of [500, 502, 503, 504, 520, 599]) {
      assert.deepEqual(classifyResponse({ status, headers: {}, nowMs: NOW }), { kind: 'server_error' }, String(status));
    }
    assert.deepEqual(classifyResponse({ status: 503, headers: { 'retry-after': '4' }, nowMs: NOW }), { kind: 'server_error', retryAfterMs: 4000 });
  });

  it('other 4xx → client_error', () => {
    for (const status of [400, 404, 405, 409, 413, 422, 499]) {
      assert.deepEqual(
        classifyResponse({ status, headers: {}, body: '{"error":{"type":"invalid_request_error"}}', nowMs: NOW }),
        {
          kind: 'client_error',
        },
        String(status),
      );
    }
  });

  it('unexpected statuses → server_error; redirects are returned (client_error), never cool the account', () => {
    for (const status of [0, 101, 600, NaN]) {
      assert.equal(classifyResponse({ status, headers: {}, nowMs: NOW }).kind, 'server_error', String(status));
    }
    for (const status of [301, 302, 304]) assert.equal(classifyResponse({ status, headers: {}, nowMs: NOW }).kind, 'client_error', String(status));
  });

  it('never throws on a malformed body', () => {
    for (const body of ['', 'not json', '{', 'null', '[]', '{"error":null}', '{"error":{"type":5}}']) {
      assert.equal(classifyResponse({ status: 400, headers: {}, body, nowMs: NOW }).kind, 'client_error');
    }
  });
});

describe('quota/classify errorTypeOf', () => {
  it('reads error.type or nothing', () => {
    assert.equal(errorTypeOf('{"type":"error","error":{"type":"api_error"}}'), 'api_error');
    assert.equal(errorTypeOf('nope'), undefined);
    assert.equal(errorTypeOf(undefined), undefined);
  });
});

describe('quota/classify classifyStreamError', () => {
  it('maps SSE error types', () => {
    assert.deepEqual(classifyStreamError('overloaded_error', NOW), { kind: 'overloaded' });
    assert.deepEqual(classifyStreamError('rate_limit_error', NOW), { kind: 'throttle', retryAfterMs: 10_000 });
    assert.deepEqual(classifyStreamError('api_error', NOW), { kind: 'server_error' });
    assert.deepEqual(classifyStreamError('invalid_request_error', NOW), { kind: 'server_error' });
    assert.deepEqual(classifyStreamError('', NOW), { kind: 'server_error' });
  });
});

describe('quota/classify: a scoped window named by no model family (7d_oi)', () => {
  const oiHeaders = {
    [`${P}status`]: 'rejected',
    [`${P}representative-claim`]: 'seven_day_oi',
    [`${P}reset`]: S(D7),
    [`${P}5h-status`]: 'allowed',
    [`${P}7d-status`]: 'allowed',
    [`${P}7d_oi-status`]: 'rejected',
    [`${P}7d_oi-reset`]: S(D7),
  };

  it("bars the refused request's model family until the window's reset, naming the window; the account's other models are not barred", () => {
    const cls = classifyResponse({ status: 429, headers: oiHeaders, nowMs: NOW, model: 'claude-opus-4-5' });
    assert.deepEqual(cls, { kind: 'model_scoped_exhausted', family: 'opus', window: 'oi', untilMs: Math.floor(D7 / 1000) * 1000 });
    const planned = planScopedCooldown(cls, NOW)!;
    assert.equal(planned.family, 'opus', 'the cooldown is kept under the family requests are planned by');
    assert.deepEqual(planned.cooldown.windows, ['7d_oi']);
    assert.equal(planned.cooldown.untilMs, Math.floor(D7 / 1000) * 1000);
  });

  it('lifted by later evidence of the oi window, not of the family it bars', () => {
    const planned = planScopedCooldown(classifyResponse({ status: 429, headers: oiHeaders, nowMs: NOW, model: 'claude-opus-4-5' }), NOW)!;
    const later = NOW + 60_000;
    const window = (status: string) => ({ status, utilization: status === 'rejected' ? 1 : 0.2, resetAtMs: D7, observedAtMs: later });
    const snapshot = (scoped: QuotaSnapshot['scoped']): QuotaSnapshot => ({ observedAtMs: later, source: 'headers', scoped });
    assert.equal(scopedCooldownClearedBy(planned.cooldown, 'opus', snapshot({ oi: window('rejected'), opus: window('allowed') }), later), false);
    assert.equal(scopedCooldownClearedBy(planned.cooldown, 'opus', snapshot({ oi: window('allowed') }), later), true);
  });

  it('a window named by a model family keeps its own family; with no model known, the key stays', () => {
    const sonnetOnly = { [`${P}7d_sonnet-status`]: 'rejected', [`${P}7d_sonnet-reset`]: S(D7) };
    assert.equal((classifyResponse({ status: 429, headers: sonnetOnly, nowMs: NOW, model: 'claude-opus-4-5' }) as { family: string }).family, 'sonnet');
    assert.deepEqual(classifyResponse({ status: 429, headers: oiHeaders, nowMs: NOW }), { kind: 'model_scoped_exhausted', family: 'oi', untilMs: Math.floor(D7 / 1000) * 1000 });
  });
});
