import assert from 'node:assert/strict';
import type { FakeUpstream } from '../../src/sim';
import { ManualClock, U, call, closeAll, oauthHeaders, parseSse, postMessage, ratelimitHeaderNames, twoAccounts, withSim } from './helpers';

describe('sim: one-shot faults', () => {
  const opened: FakeUpstream[] = [];
  afterEach(() => closeAll(opened));

  it('throttle: 429 with retry-after (seconds) and every unified status allowed', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts({ initialFiveHourUsed: 0.9 }) });
    sim.injectFault('a', { kind: 'throttle', retryAfterS: 7 });
    const r = await postMessage(sim, 'tok-a');
    assert.equal(r.status, 429);
    assert.equal(r.headers['retry-after'], '7');
    assert.equal(r.json().error.type, 'rate_limit_error');
    const statuses = Object.entries(r.headers).filter(([k]) => k.startsWith(U) && k.endsWith('status') && !k.includes('overage'));
    assert.ok(statuses.length >= 3);
    for (const [k, v] of statuses) assert.equal(v, 'allowed', k);
    assert.equal(r.headers[U + '5h-utilization'], '0.9');
    assert.equal(sim.requests[0].fault, 'throttle');
    assert.equal((await postMessage(sim, 'tok-a')).status, 200, 'one-shot');
  });

  it('throttle_window: every request within the window gets a throttle 429, until the window ends (sim clock)', async () => {
    const clock = new ManualClock();
    const sim = await withSim(opened, { accounts: twoAccounts(), now: clock.now });
    sim.injectFault('a', { kind: 'throttle_window', durationMs: 2_500 });
    for (const left of ['3', '3']) {
      const r = await postMessage(sim, 'tok-a');
      assert.equal(r.status, 429);
      assert.equal(r.json().error.type, 'rate_limit_error');
      assert.equal(r.headers['retry-after'], left, 'the window left, rounded up to seconds');
      assert.equal(r.headers[U + '5h-status'], 'allowed');
    }
    assert.equal((await postMessage(sim, 'tok-b')).status, 200, 'only that account');
    clock.advance(2_000);
    assert.equal((await postMessage(sim, 'tok-a')).headers['retry-after'], '1');
    clock.advance(500);
    assert.equal((await postMessage(sim, 'tok-a')).status, 200, 'over at its end');
    sim.injectFault('a', { kind: 'throttle_window', durationMs: 10_000, retryAfterS: 1 });
    assert.equal((await postMessage(sim, 'tok-a')).headers['retry-after'], '1', 'a fixed retry-after');
    assert.deepEqual(sim.account('a').pendingFaults, [], 'not a queued fault');
    sim.clearFaults('a');
    assert.equal((await postMessage(sim, 'tok-a')).status, 200, 'cleared');
    assert.deepEqual(
      sim.requests.filter((q) => q.status === 429).map((q) => q.fault),
      ['throttle_window', 'throttle_window', 'throttle_window', 'throttle_window'],
    );
  });

  it('headerless_429: body message Error, no anthropic-ratelimit-* and no retry-after', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts() });
    sim.injectFault('a', { kind: 'headerless_429' });
    const r = await postMessage(sim, 'tok-a');
    assert.equal(r.status, 429);
    assert.deepEqual(r.json(), { type: 'error', error: { type: 'rate_limit_error', message: 'Error' } });
    assert.deepEqual(ratelimitHeaderNames(r), []);
    assert.equal(r.headers['retry-after'], undefined);
  });

  it('entitlement_429, overloaded_529, server_error, forbidden and bad_request answer as promised', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts() });
    const cases: Array<[Parameters<FakeUpstream['injectFault']>[1], number, string, RegExp]> = [
      [{ kind: 'entitlement_429' }, 429, 'rate_limit_error', /^Extra usage is required for long context requests\.$/],
      [{ kind: 'overloaded_529' }, 529, 'overloaded_error', /Overloaded/],
      [{ kind: 'server_error', status: 503 }, 503, 'api_error', /./],
      [{ kind: 'server_error', status: 500 }, 500, 'api_error', /./],
      [{ kind: 'forbidden' }, 403, 'permission_error', /^OAuth token has been revoked\.$/],
      [{ kind: 'bad_request' }, 400, 'invalid_request_error', /./],
    ];
    for (const [f] of cases) sim.injectFault('a', f);
    assert.deepEqual(
      sim.account('a').pendingFaults,
      cases.map(([f]) => f.kind),
    );
    for (const [f, status, type, msg] of cases) {
      const r = await postMessage(sim, 'tok-a');
      assert.equal(r.status, status, f.kind);
      assert.equal(r.json().type, 'error');
      assert.equal(r.json().error.type, type, f.kind);
      assert.match(r.json().error.message, msg);
    }
    assert.ok(
      ratelimitHeaderNames(
        await (async () => {
          sim.injectFault('a', { kind: 'entitlement_429' });
          return postMessage(sim, 'tok-a');
        })(),
      ).length > 0,
      'entitlement 429 carries unified headers',
    );
    assert.deepEqual(
      sim.requests.map((r) => r.fault),
      [...cases.map(([f]) => f.kind), 'entitlement_429'],
    );
    assert.equal(sim.account('a').served, 0);
  });

  it('faults are FIFO per account, count repeats, count_tokens does not consume them', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts() });
    sim.injectFault('a', { kind: 'throttle', retryAfterS: 1 }, 2);
    sim.injectFault('a', { kind: 'overloaded_529' });
    const ct = await call(`${sim.url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: oauthHeaders('tok-a'),
      body: JSON.stringify({ model: 'claude-sonnet-4-5', messages: [] }),
    });
    assert.equal(ct.status, 200);
    assert.equal((await postMessage(sim, 'tok-b')).status, 200, 'faults are per account');
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await postMessage(sim, 'tok-a')).status);
    assert.deepEqual(statuses, [429, 429, 529, 200]);
    sim.injectFault('a', { kind: 'forbidden' }, 3);
    sim.clearFaults();
    assert.equal((await postMessage(sim, 'tok-a')).status, 200);
  });

  it('overloaded_in_stream: 200 SSE whose first event is an overloaded error; JSON gets 529', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts() });
    sim.injectFault('a', { kind: 'overloaded_in_stream' }, 2);
    const r = await postMessage(sim, 'tok-a', { stream: true });
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'], /^text\/event-stream/);
    const ev = parseSse(r.text);
    assert.equal(ev[0].event, 'error');
    assert.deepEqual(ev[0].data, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    assert.ok(!ev.some((e) => e.event === 'message_start'));
    const j = await postMessage(sim, 'tok-a');
    assert.equal(j.status, 529);
    assert.equal(j.json().error.type, 'overloaded_error');
  });

  it('error_after_content: message_start, block start, 2 deltas, then an api_error event and the end', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts() });
    sim.injectFault('a', { kind: 'error_after_content' });
    const r = await postMessage(sim, 'tok-a', { stream: true });
    assert.equal(r.status, 200);
    assert.equal(r.bodyError, undefined, 'the HTTP body ends cleanly');
    const ev = parseSse(r.text);
    assert.deepEqual(
      ev.map((e) => e.event),
      ['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'error'],
    );
    assert.equal(ev[4].data.error.type, 'api_error');
    assert.equal(sim.account('a').served, 0);
  });

  it('truncate: the stream is cut before message_stop; clean variant ends without message_stop', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts() });
    sim.injectFault('a', { kind: 'truncate' });
    const r = await postMessage(sim, 'tok-a', { stream: true });
    assert.equal(r.status, 200);
    assert.ok(r.bodyError, 'the connection is cut mid-body');
    const frames = r.text.split('\n\n').filter((f) => f.startsWith('event: '));
    assert.ok(frames[0].startsWith('event: message_start'));
    assert.ok(frames.some((f) => f.startsWith('event: content_block_delta')));
    assert.ok(!r.text.includes('message_stop'));
    assert.ok(!r.text.includes('message_delta'));

    sim.injectFault('a', { kind: 'truncate', clean: true });
    const c = await postMessage(sim, 'tok-a', { stream: true });
    assert.equal(c.bodyError, undefined);
    const ev = parseSse(c.text);
    assert.equal(ev[0].event, 'message_start');
    assert.ok(!ev.some((e) => e.event === 'message_stop'));
    assert.equal(sim.account('a').served, 0);
    assert.equal((await postMessage(sim, 'tok-a', { stream: true })).status, 200, 'server still healthy');
  });

  it('slow_first_byte delays the response headers, then answers normally', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts() });
    sim.injectFault('a', { kind: 'slow_first_byte', delayMs: 150 });
    const t0 = Date.now();
    const r = await postMessage(sim, 'tok-a', { stream: true });
    assert.ok(Date.now() - t0 >= 140, `took ${Date.now() - t0} ms`);
    assert.equal(r.status, 200);
    assert.equal(parseSse(r.text).pop()?.event, 'message_stop');
    assert.equal(sim.requests[0].fault, 'slow_first_byte');
    const t1 = Date.now();
    await postMessage(sim, 'tok-a');
    assert.ok(Date.now() - t1 < 140);
  });

  it('rejects invalid faults and unknown labels', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts() });
    assert.throws(() => sim.injectFault('zz', { kind: 'forbidden' }), /unknown sim account/);
    assert.throws(() => sim.injectFault('a', { kind: 'nope' } as never), /unknown fault kind/);
    assert.throws(() => sim.injectFault('a', { kind: 'exhaust', window: 'monthly', resetInMs: 1 }), /unknown window/);
    assert.throws(() => sim.injectFault('a', { kind: 'server_error', status: 501 as 500 }));
  });
});
