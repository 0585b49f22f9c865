/**
 * The pool under blips (issue 14, faults 1, 2 and 6), through the real proxy against the fake
 * upstream: cooldowns that follow the upstream's `retry-after`, same-account retry, the transient
 * wait in the waiting room, and the binding rule table (docs/routing.md#bindings-and-blips).
 */
import { strict as assert } from 'node:assert';
import { parseConfigText } from '../../src/config/load';
import type { SimAccountSpec } from '../../src/sim';
import { stickyKeyHash } from '../../src/routing/identify';
import { accounts, callRouter, eventually, messagesBody, routerStatus, startHarness, type Harness } from '../support/routerHarness';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DAY = 86_400_000;

/** Accounts in which `first` ranks first under expiry-first (its weekly allowance expires soonest). */
function firstThen(first: string, ...others: string[]): SimAccountSpec[] {
  return [
    { ...accounts(first)[0], sevenDayResetInMs: DAY, initialSevenDayUsed: 0.5 },
    ...others.map((o, i) => ({ ...accounts(o)[0], sevenDayResetInMs: (3 + i) * DAY, initialSevenDayUsed: 0.1 })),
  ];
}

const servedBy = (r: { headers: Record<string, string> }) => r.headers['x-claude-router-account'];

describe('blips: short upstream pauses cost no error and move no session', function () {
  this.timeout(60_000);
  let h: Harness;
  afterEach(() => h?.close());

  it('a throttle with retry-after: 1 never keeps an account out longer than about 1 s', async () => {
    // No same-account retry (blip wait 0): the throttled request moves on, and the cooldown is what is left.
    h = await startHarness(firstThen('a', 'b'), { routing: { sessionAffinityBlipWaitMs: 0 } });
    assert.equal(servedBy(await callRouter(h)), 'a');
    h.sim.injectFault('a', { kind: 'throttle', retryAfterS: 1 });
    const t0 = Date.now();
    assert.equal(servedBy(await callRouter(h)), 'b');
    const a = (await routerStatus(h)).accounts.find((x: { label: string }) => x.label === 'a');
    const left = Date.parse(a.coolingUntil) - t0;
    assert.ok(left <= 1_300, `a is cooled for ${left} ms after a retry-after of 1 s`);
    await sleep(Math.max(0, t0 + 1_100 - Date.now()));
    assert.equal(servedBy(await callRouter(h)), 'a', 'a serves again once its retry-after has passed');
  });

  it("no local 'no usable account' answer while every account is in a transient cooldown ending within transient-wait-max-ms; a usage window is never waited for", async () => {
    // No same-account retry: every account answers its throttle, then the request waits for the pool.
    h = await startHarness(firstThen('a', 'b'), { routing: { sessionAffinityBlipWaitMs: 0 } });
    for (const l of ['a', 'b']) h.sim.injectFault(l, { kind: 'throttle_window', durationMs: 1_000, retryAfterS: 1 });
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => callRouter(h, { session: `w${i}` })));
    for (const r of results) assert.equal(r.status, 200, r.text);
    await h.router.close();
    const records = h.decisions();
    assert.ok(!records.some((d) => d.outcome === 'no_usable_account'), JSON.stringify(records.map((d) => d.outcome)));
    const waited = records.filter((d) => d.waits?.some((w) => w.why === 'transient' && w.end === 'woken'));
    assert.ok(waited.length > 0, 'requests waited for the pool to recover');
    for (const d of waited) assert.equal(d.outcome, 'success');
    await h.close();

    h = await startHarness(firstThen('a', 'b'));
    for (const l of ['a', 'b']) h.sim.injectFault(l, { kind: 'exhaust', window: '5h', resetInMs: 30_000 });
    await callRouter(h); // both answer their exhausted window: the pool is out for 30 s
    const t0 = Date.now();
    const r = await callRouter(h, { session: 'late' });
    assert.equal(r.status, 429);
    assert.ok(Date.now() - t0 < 1_000, 'an exhausted window is not waited for, even one resetting within transient-wait-max-ms');
    assert.equal(r.headers['anthropic-ratelimit-unified-status'], 'rejected', 'the answer claims the window');
    assert.equal(r.headers['anthropic-ratelimit-unified-representative-claim'], 'five_hour');
  });

  it('waiters are released one at a time, not all at once', async () => {
    // One account: every request waits for the same recovery.
    h = await startHarness(accounts('a'), { routing: { sessionAffinityBlipWaitMs: 0 } });
    h.sim.injectFault('a', { kind: 'throttle_window', durationMs: 800, retryAfterS: 1 });
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => callRouter(h, { session: `r${i}` })));
    for (const r of results) assert.equal(r.status, 200, r.text);
    const served = h.sim.requests.filter((q) => q.status === 200);
    assert.equal(served.length, 5);
    for (let i = 1; i < served.length; i++) {
      const gap = served[i].at - served[i - 1].at;
      assert.ok(gap >= 150, `released request ${i} reached the upstream ${gap} ms after the one before`);
    }
  });

  it('a cooldown lifted early (Reset Cooldown) releases the requests already waiting for it at once, not at its old end', async () => {
    h = await startHarness(accounts('a'), { routing: { sessionAffinityBlipWaitMs: 0 } });
    h.sim.injectFault('a', { kind: 'throttle_window', durationMs: 40_000, retryAfterS: 40 });
    const t0 = Date.now();
    const held = callRouter(h, { session: 'held' });
    await eventually(async () => (await routerStatus(h)).waiting.requests === 1, 5_000, 'the request held for the 40 s cooldown');
    h.sim.clearFaults('a');
    assert.ok(h.router.engine.resetCooldown('a')?.cooldown, 'a was cooling');
    const r = await held;
    assert.equal(r.status, 200, r.text);
    assert.ok(Date.now() - t0 < 5_000, `served ${Date.now() - t0} ms after it arrived, not when the lifted cooldown would have ended`);
  });

  it('a client that leaves while waiting holds no place in the room', async () => {
    h = await startHarness(accounts('a'), { routing: { sessionAffinityBlipWaitMs: 0, maxWaitingRequests: 1 } });
    h.sim.injectFault('a', { kind: 'throttle_window', durationMs: 2_000, retryAfterS: 2 });
    const ac = new AbortController();
    const leaving = callRouter(h, { session: 'leaves', signal: ac.signal }).catch(() => undefined);
    await eventually(async () => (await routerStatus(h)).waiting.requests === 1, 3_000, 'the first request held');
    ac.abort();
    await leaving;
    await eventually(async () => (await routerStatus(h)).waiting.requests === 0, 3_000, 'its place given back');
    const stays = callRouter(h, { session: 'stays' });
    await eventually(async () => (await routerStatus(h)).waiting.requests === 1, 3_000, 'the next request held in the freed place');
    assert.equal((await stays).status, 200);
  });

  it('beyond the waiting room its bound, a request gets an immediate throttle-shaped 429 with an honest retry-after', async () => {
    h = await startHarness(accounts('a'), { routing: { sessionAffinityBlipWaitMs: 0, maxWaitingRequests: 1 } });
    h.sim.injectFault('a', { kind: 'throttle_window', durationMs: 2_000, retryAfterS: 2 });
    const held = callRouter(h, { session: 'held' });
    await eventually(async () => (await routerStatus(h)).waiting.requests === 1, 3_000, 'one request held');
    const t0 = Date.now();
    const refused = await callRouter(h, { session: 'refused' });
    assert.ok(Date.now() - t0 < 1_000, 'answered at once');
    assert.equal(refused.status, 429);
    assert.equal(JSON.parse(refused.text).error.type, 'rate_limit_error');
    assert.equal(refused.headers['anthropic-ratelimit-unified-status'], undefined, 'no usage window is claimed for a throttle');
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 2, `retry-after ${retryAfter} is when the account recovers`);
    assert.equal((await held).status, 200);
    await h.router.close();
    const record = h.decisions().find((d) => d.stickyKeyHash === stickyKeyHash('refused'))!;
    assert.deepEqual(
      record.waits?.map((w) => w.end),
      ['refused'],
    );
  });

  it('a request without a binding retries the account of a short throttle, at most two per cooling window of that account', async () => {
    h = await startHarness(firstThen('a', 'b'));
    h.sim.injectFault('a', { kind: 'throttle_window', durationMs: 1_000, retryAfterS: 1 });
    const results = await Promise.all(Array.from({ length: 6 }, () => callRouter(h)));
    for (const r of results) assert.equal(r.status, 200, r.text);
    await h.router.close();
    const retried = h.decisions().filter((d) => d.waits?.some((w) => w.why === 'same_account_retry'));
    assert.ok(retried.length >= 1 && retried.length <= 2, `${retried.length} requests retried a`);
    for (const d of retried) {
      assert.equal(d.servedBy, 'a', 'the retried request is served by the account it waited for');
      assert.deepEqual(
        d.attempts.map((x) => `${x.account}:${x.result}`),
        ['a:throttle', 'a:success'],
      );
    }
  });

  for (const mode of ['on-serve', 'on-quota'] as const) {
    it(`${mode}: a bound session's account throttled for 1 s: the session's next requests are served by the same account`, async () => {
      h = await startHarness(firstThen('a', 'b'), { routing: { sessionAffinity: true, sessionAffinityRebind: mode } });
      assert.equal(servedBy(await callRouter(h, { session: 's1' })), 'a');
      h.sim.injectFault('a', { kind: 'throttle_window', durationMs: 1_000, retryAfterS: 1 });
      const during = await Promise.all([0, 150, 300].map(async (delay) => (await sleep(delay), callRouter(h, { session: 's1' }))));
      const after = await callRouter(h, { session: 's1' });
      assert.deepEqual([...during, after].map(servedBy), ['a', 'a', 'a', 'a']);
      const st = await routerStatus(h);
      assert.equal(st.sessions.find((x: { sessionId: string }) => x.sessionId === stickyKeyHash('s1')).account, 'a');
      await h.router.close();
      const waits = h.decisions().flatMap((d) => d.waits ?? []);
      assert.ok(
        waits.some((w) => w.why === 'blip' && w.account === 'a'),
        JSON.stringify(waits),
      );
    });
  }

  it('on-quota: a longer transient failure serves elsewhere without rebinding and the session returns when its account recovers; on-serve binds where it was served; quota moves both', async () => {
    const served: Record<string, string[]> = {};
    for (const mode of ['on-serve', 'on-quota'] as const) {
      h = await startHarness(firstThen('a', 'b'), { routing: { sessionAffinity: true, sessionAffinityRebind: mode } });
      const run = (served[mode] = [servedBy(await callRouter(h, { session: 's1' }))]);
      // 3 s is longer than the 2 s blip wait: no wait, served elsewhere.
      h.sim.injectFault('a', { kind: 'throttle_window', durationMs: 2_500, retryAfterS: 3 });
      const t0 = Date.now();
      run.push(servedBy(await callRouter(h, { session: 's1' })));
      run.push(servedBy(await callRouter(h, { session: 's1' })));
      await sleep(Math.max(0, t0 + 3_200 - Date.now()));
      run.push(servedBy(await callRouter(h, { session: 's1' })));
      // Quota: the session's account (on-quota: still a; on-serve: b) runs out of its 5-hour window.
      const bound = run[run.length - 1];
      h.sim.injectFault(bound, { kind: 'exhaust', window: '5h', resetInMs: 3_600_000 });
      run.push(servedBy(await callRouter(h, { session: 's1' })));
      const st = await routerStatus(h);
      run.push(st.sessions.find((x: { sessionId: string }) => x.sessionId === stickyKeyHash('s1')).account);
      await h.close();
    }
    assert.deepEqual(served['on-serve'], ['a', 'b', 'b', 'b', 'a', 'a'], 'on-serve: bound where served, no bounce back; exhausted b moves it');
    assert.deepEqual(served['on-quota'], ['a', 'b', 'b', 'a', 'b', 'b'], 'on-quota: back to a once it recovered; exhausted a moves it');
  });

  describe('a session is not sent past the soft limit while an account below it only pauses', () => {
    /** a below the 0.97 soft limit, b past it; the usage poller has read both. */
    async function belowAndPast(routing: Record<string, unknown>): Promise<Harness> {
      const spec = accounts('a', 'b').map((x, i) => ({ ...x, fiveHourLimitTokens: 2_000_000, initialFiveHourUsed: [0.2, 0.98][i], fiveHourResetInMs: 3 * 3_600_000 }));
      const harness = await startHarness(spec, { routing: { accountRanking: 'headroom-first', sessionAffinity: true, ...routing }, sim: { sseIntervalMs: 40 } });
      for (let i = 0; i < spec.length; i++) await harness.router.poller.tick();
      return harness;
    }

    it('new sessions wait for room on the account below it rather than bind past it', async () => {
      h = await belowAndPast({ maxInflightPerAccount: 1 });
      const results = await Promise.all([0, 1, 2].map((i) => callRouter(h, { session: `new-${i}`, body: messagesBody({ stream: true }) })));
      for (const r of results) assert.equal(r.status, 200, r.text);
      assert.deepEqual(results.map(servedBy), ['a', 'a', 'a']);
      assert.equal(h.sim.requests.filter((q) => q.account === 'b' && q.path.startsWith('/v1/messages')).length, 0, 'nothing went past the soft limit');
    });

    it('a new session waits once for the account below it that blips, rather than bind past it', async () => {
      h = await belowAndPast({});
      h.router.engine.state.setCooldown('a', { untilMs: Date.now() + 800, reason: 'throttle', setAtMs: Date.now() });
      const t0 = Date.now();
      const r = await callRouter(h, { session: 'arrives-during-the-blip' });
      assert.equal(r.status, 200, r.text);
      assert.equal(servedBy(r), 'a');
      assert.ok(Date.now() - t0 >= 600, 'it waited for the blip');
      await h.router.close();
      const d = h.decisions().at(-1)!;
      assert.deepEqual(
        d.waits?.map((w) => [w.why, w.account, w.end]),
        [['blip', 'a', 'woken']],
      );
    });
  });

  it('when every account is above the soft limit the pin stays (headroom-first does not thrash)', async () => {
    // Both accounts above the 0.97 soft limit; each request adds about 0.3 % to the 5-hour window of the account serving it.
    const spec = accounts('a', 'b').map((a, i) => ({ ...a, fiveHourLimitTokens: 200_000, initialFiveHourUsed: [0.975, 0.978][i], fiveHourResetInMs: 3 * 3_600_000 }));
    h = await startHarness(spec, { routing: { accountRanking: 'headroom-first', sessionAffinity: true } });
    for (let i = 0; i < spec.length; i++) await h.router.poller.tick();
    const body = messagesBody({ text: 'context '.repeat(300) });
    const run: string[] = [];
    for (let i = 0; i < 6; i++) run.push(servedBy(await callRouter(h, { session: 'pinned', body })));
    assert.deepEqual(run, ['a', 'a', 'a', 'a', 'a', 'a'], 'the session stays where it is: no other account is below the limit');
  });
});

describe('config: session-affinity-rebind, session-affinity-blip-wait-ms, transient-wait-max-ms', () => {
  it('are read from the file, and refused with their name and the reason', () => {
    const ok = parseConfigText('routing:\n  session-affinity-rebind: on-quota\n  session-affinity-blip-wait-ms: 0\n  transient-wait-max-ms: 0\n');
    assert.ok(ok.ok);
    assert.deepEqual(ok.ok && ok.config.routing, { sessionAffinityRebind: 'on-quota', sessionAffinityBlipWaitMs: 0, transientWaitMaxMs: 0 });
    const cases: Array<[string, RegExp]> = [
      ['session-affinity-rebind: sometimes', /^routing\.session-affinity-rebind: /],
      ['session-affinity-blip-wait-ms: -1', /^routing\.session-affinity-blip-wait-ms: must be from 0 to 30000 ms/],
      ['transient-wait-max-ms: 200000', /^routing\.transient-wait-max-ms: must be from 0 \(off\) to 120000 ms: the whole wait of a request is bounded by 120 s/],
    ];
    for (const [line, message] of cases) {
      const bad = parseConfigText(`routing:\n  ${line}\n`);
      assert.equal(bad.ok, false, line);
      assert.match((bad as { error: string }).error, message);
    }
  });
});
