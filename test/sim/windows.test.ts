import assert from 'node:assert/strict';
import type { FakeUpstream } from '../../src/sim';
import { FIVE_HOUR_MS, SEVEN_DAY_MS } from '../../src/sim';
import { ManualClock, U, closeAll, postMessage, twoAccounts, withSim } from './helpers';

const EXHAUSTED = { type: 'error', error: { type: 'rate_limit_error', message: "This request would exceed your account's rate limit. Please try again later." } };

describe('sim: windows and unified headers', () => {
  const opened: FakeUpstream[] = [];
  afterEach(() => closeAll(opened));

  it('reports utilisation as a fraction that grows with the tokens served', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts({ fiveHourLimitTokens: 1000, sevenDayLimitTokens: 10_000 }) });
    const r1 = await postMessage(sim, 'tok-a');
    const r2 = await postMessage(sim, 'tok-a');
    const u1 = Number(r1.headers[U + '5h-utilization']);
    const u2 = Number(r2.headers[U + '5h-utilization']);
    const m1 = r1.json().usage;
    const t1 = m1.input_tokens + m1.cache_creation_input_tokens + m1.output_tokens;
    assert.equal(u1, Number((t1 / 1000).toFixed(6)), 'header shows the fraction after this request');
    assert.ok(u2 > u1 && u2 < 1, `${u1} -> ${u2}`);
    assert.ok(Number(r2.headers[U + '7d-utilization']) > 0 && Number(r2.headers[U + '7d-utilization']) < u2);
    assert.equal(r2.headers[U + 'status'], 'allowed');
    assert.ok(Math.abs(sim.account('a').fiveHourUsed - (2 * t1) / 1000) < 1e-9);
    // Resets are epoch seconds, not ms.
    const reset = Number(r2.headers[U + 'reset']);
    assert.ok(reset > Date.now() / 1000 && reset < Date.now() / 1000 + 6 * 3600);
  });

  it('goes allowed_warning at 0.8, rejects once full (window_full) and empties at the reset', async () => {
    const clock = new ManualClock();
    const sim = await withSim(opened, { now: clock.now, accounts: twoAccounts({ fiveHourLimitTokens: 100, initialFiveHourUsed: 0.75 }) });
    const startedAt = clock.t;
    const r1 = await postMessage(sim, 'tok-a');
    assert.equal(r1.status, 200);
    assert.equal(r1.headers[U + '5h-status'], 'allowed_warning');
    assert.equal(r1.headers[U + 'status'], 'allowed_warning');
    assert.equal(r1.headers[U + 'representative-claim'], 'five_hour');
    // Initial usage > 0 without a reset: the window started at server start.
    assert.equal(sim.account('a').fiveHourResetAtMs, startedAt + FIVE_HOUR_MS);
    let r = r1;
    for (let i = 0; i < 10 && r.status === 200; i++) r = await postMessage(sim, 'tok-a');
    assert.equal(r.status, 429);
    assert.deepEqual(r.json(), EXHAUSTED);
    assert.equal(r.headers[U + '5h-status'], 'rejected');
    assert.equal(r.headers[U + 'status'], 'rejected');
    assert.equal(r.headers[U + 'reset'], String(Math.ceil((startedAt + FIVE_HOUR_MS) / 1000)));
    assert.ok(Number(r.headers[U + '5h-utilization']) >= 1);
    assert.equal(sim.requests[sim.requests.length - 1].fault, 'window_full');
    // Other account unaffected.
    assert.equal((await postMessage(sim, 'tok-b')).status, 200);

    clock.advance(FIVE_HOUR_MS);
    const later = clock.t;
    assert.equal(sim.account('a').fiveHourUsed, 0);
    assert.equal(sim.account('a').fiveHourResetAtMs, 0, 'not restarted until the next request');
    clock.advance(1234);
    const after = await postMessage(sim, 'tok-a');
    assert.equal(after.status, 200);
    assert.equal(after.headers[U + '5h-status'], 'allowed');
    assert.equal(sim.account('a').fiveHourResetAtMs, later + 1234 + FIVE_HOUR_MS, 'next window counts from the first request after the reset');
  });

  it('exhaust fault: 429 with the rejected window and its future reset until the reset passes', async () => {
    const clock = new ManualClock();
    const sim = await withSim(opened, { now: clock.now, accounts: twoAccounts() });
    sim.injectFault('a', { kind: 'exhaust', window: '5h', resetInMs: 90_000 });
    for (let i = 0; i < 2; i++) {
      const r = await postMessage(sim, 'tok-a', { stream: i === 1 });
      assert.equal(r.status, 429);
      assert.deepEqual(r.json(), EXHAUSTED);
      assert.equal(r.headers[U + 'status'], 'rejected');
      assert.equal(r.headers[U + '5h-status'], 'rejected');
      assert.equal(r.headers[U + '7d-status'], 'allowed');
      assert.equal(r.headers[U + 'representative-claim'], 'five_hour');
      assert.equal(r.headers[U + 'reset'], String(Math.ceil((clock.t + 90_000) / 1000)));
      assert.ok(Number(r.headers[U + 'reset']) * 1000 > clock.t, 'reset is in the future');
      assert.equal(r.headers['retry-after'], undefined);
      assert.equal(sim.requests[i].fault, 'exhaust');
    }
    assert.equal(sim.account('a').served, 0);
    assert.equal((await postMessage(sim, 'tok-b')).status, 200);
    clock.advance(89_000);
    assert.equal((await postMessage(sim, 'tok-a')).status, 429);
    clock.advance(1_000);
    const ok = await postMessage(sim, 'tok-a');
    assert.equal(ok.status, 200);
    assert.equal(ok.headers[U + '5h-status'], 'allowed');
  });

  it('exhaust 7d names seven_day; perWindowOnly omits the unified verdict headers; clearFaults lifts it', async () => {
    const clock = new ManualClock();
    const sim = await withSim(opened, { now: clock.now, accounts: twoAccounts() });
    sim.injectFault('a', { kind: 'exhaust', window: 'seven_day', resetInMs: 3 * 86_400_000 });
    const r = await postMessage(sim, 'tok-a');
    assert.equal(r.status, 429);
    assert.equal(r.headers[U + 'representative-claim'], 'seven_day');
    assert.equal(r.headers[U + '7d-status'], 'rejected');
    assert.equal(r.headers[U + '5h-status'], 'allowed');
    assert.equal(r.headers[U + 'reset'], String(Math.ceil((clock.t + 3 * 86_400_000) / 1000)));

    sim.injectFault('b', { kind: 'exhaust', window: '5h', resetInMs: 60_000, perWindowOnly: true });
    const p = await postMessage(sim, 'tok-b');
    assert.equal(p.status, 429);
    assert.equal(p.headers[U + 'status'], undefined);
    assert.equal(p.headers[U + 'reset'], undefined);
    assert.equal(p.headers[U + '5h-status'], 'rejected');

    sim.clearFaults('a');
    assert.equal((await postMessage(sim, 'tok-a')).status, 200);
    assert.equal((await postMessage(sim, 'tok-b')).status, 429, 'clearing a does not clear b');
  });

  it('model-scoped exhaustion rejects only that family, with only 7d_<family> rejected', async () => {
    const clock = new ManualClock();
    const sim = await withSim(opened, {
      now: clock.now,
      accounts: twoAccounts({ scopedWindows: { opus: { limitTokens: 1000 }, sonnet: { limitTokens: 5000, initialUsed: 0.5, resetInMs: 3_600_000 } } }),
    });
    sim.injectFault('a', { kind: 'exhaust', window: '7d_opus', resetInMs: 86_400_000 });
    const r = await postMessage(sim, 'tok-a', { model: 'claude-opus-4-1-20250805' });
    assert.equal(r.status, 429);
    assert.equal(r.headers[U + '7d_opus-status'], 'rejected');
    assert.equal(r.headers[U + '7d_opus-reset'], String(Math.ceil((clock.t + 86_400_000) / 1000)));
    assert.equal(r.headers[U + '5h-status'], 'allowed');
    assert.equal(r.headers[U + '7d-status'], 'allowed');
    assert.notEqual(r.headers[U + 'status'], 'rejected');
    assert.equal(r.headers[U + 'representative-claim'], 'seven_day_opus');
    assert.equal(r.headers[U + '7d_sonnet-utilization'], '0.5');
    assert.equal(r.headers[U + '7d_sonnet-reset'], String(Math.ceil((clock.t + 3_600_000) / 1000)));

    const s = await postMessage(sim, 'tok-a', { model: 'claude-sonnet-4-5-20250929' });
    assert.equal(s.status, 200);
    assert.equal(s.headers[U + '7d_opus-status'], 'rejected', 'every configured scoped window is reported');
    assert.ok(Number(s.headers[U + '7d_sonnet-utilization']) > 0.5, 'sonnet traffic fills the sonnet window');
    assert.equal(sim.account('a').scoped.opus.used, 1);
  });

  it('a scoped window fills only with its own family', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts({ scopedWindows: { opus: { limitTokens: 50 } } }) });
    await postMessage(sim, 'tok-a', { model: 'claude-haiku-4-5' });
    assert.equal(sim.account('a').scoped.opus.used, 0);
    let r = await postMessage(sim, 'tok-a', { model: 'claude-opus-4-5' });
    for (let i = 0; i < 10 && r.status === 200; i++) r = await postMessage(sim, 'tok-a', { model: 'claude-opus-4-5' });
    assert.equal(r.status, 429);
    assert.equal(r.headers[U + '7d_opus-status'], 'rejected');
    assert.equal(sim.requests[sim.requests.length - 1].fault, 'window_full');
    assert.equal((await postMessage(sim, 'tok-a', { model: 'claude-haiku-4-5' })).status, 200);
  });

  it('initial reset times and 7d roll over on the injected clock', async () => {
    const clock = new ManualClock();
    const sim = await withSim(opened, { now: clock.now, accounts: twoAccounts({ initialSevenDayUsed: 0.5, sevenDayResetInMs: 1000, fiveHourResetInMs: 500 }) });
    assert.equal(sim.account('a').sevenDayResetAtMs, clock.t + 1000);
    assert.equal(sim.account('a').sevenDayUsed, 0.5);
    clock.advance(1000);
    assert.equal(sim.account('a').sevenDayUsed, 0);
    const r = await postMessage(sim, 'tok-a');
    assert.equal(r.headers[U + '7d-reset'], String(Math.ceil((clock.t + SEVEN_DAY_MS) / 1000)));
  });
});
