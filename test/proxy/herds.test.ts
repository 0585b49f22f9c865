/**
 * Herds: many requests moving onto one account at once — the sessions of an account that became
 * unusable, or the traffic of an account whose cooldown just ended. The account takes a first
 * request alone and more as answers succeed; when it turns out unusable too, the held requests go
 * on one by one.
 */
import { strict as assert } from 'node:assert';
import type { SimRequestRecord } from '../../src/sim';
import { accounts, callRouter, eventually, messagesBody, routerStatus, startHarness, type CallResult, type Harness } from '../support/routerHarness';

const STREAM = messagesBody({ stream: true });
const SESSIONS = Array.from({ length: 20 }, (_, i) => `herd-${i}`);
/** Each answer of the account a herd moves to takes this long to start, ms: long enough for a whole herd to arrive if nothing held it back. */
const FIRST_BYTE_MS = 150;

function callAll(h: Harness, sessions: readonly string[]): Promise<CallResult[]> {
  return Promise.all(sessions.map((session) => callRouter(h, { session, body: STREAM })));
}

/** The Messages requests `label` received from index `since` of the sim's record on. */
function arrivals(h: Harness, label: string, since: number): SimRequestRecord[] {
  return h.sim.requests
    .slice(since)
    .filter((r) => r.account === label && r.path.startsWith('/v1/messages'))
    .sort((x, y) => x.seq! - y.seq!);
}

/**
 * Asserts the slow start: before the account's first answer only one request had arrived, and
 * before its (j+1)-th answer at most 1 + 2j (one more admitted per answer, the answered one's place
 * taken again).
 */
function assertRamp(received: SimRequestRecord[], what: string): void {
  const answers = received.map((r) => r.answeredAfter ?? Infinity).sort((x, y) => x - y);
  const before = answers.map((last) => received.filter((r) => r.seq! <= last).length);
  assert.equal(before[0], 1, `${what}: the first request arrived alone (arrivals before each answer: ${before.join(',')})`);
  before.forEach((n, j) => assert.ok(n <= 1 + 2 * j, `${what}: at most ${1 + 2 * j} before answer ${j + 1}, got ${n} (${before.join(',')})`));
}

/** Every account's usage read, so the sessions all open on `a` (an account without evidence would take an evidence probe). */
async function readEveryAccount(h: Harness): Promise<void> {
  for (let i = 0; i < 3; i++) await h.router.poller.tick();
}

describe('herds', function () {
  this.timeout(30_000);
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('when an account with 20 bound sessions becomes unusable, the next account receives its first request alone and the rest as answers succeed', async () => {
    h = await startHarness(accounts('a', 'b'), { routing: { sessionAffinity: true }, sim: { sseIntervalMs: 20 } });
    await readEveryAccount(h);
    for (const r of await callAll(h, SESSIONS)) assert.equal(r.headers['x-claude-router-account'], 'a');
    h.sim.injectFault('a', { kind: 'exhaust', window: '5h', resetInMs: 3_600_000 });
    h.sim.injectFault('b', { kind: 'slow_first_byte', delayMs: FIRST_BYTE_MS }, SESSIONS.length);
    const since = h.sim.requests.length;

    const results = await callAll(h, SESSIONS);
    for (const r of results) {
      assert.equal(r.status, 200, r.text.slice(0, 200));
      assert.equal(r.headers['x-claude-router-account'], 'b');
    }
    const onB = arrivals(h, 'b', since);
    assert.equal(onB.length, 20);
    assertRamp(onB, 'b');
  });

  it('when the usage poller, not an answer, shows that an account with 20 bound sessions is exhausted, the next account still receives its first request alone', async () => {
    let offset = 0;
    const now = () => Date.now() + offset;
    h = await startHarness(accounts('a', 'b'), { routing: { sessionAffinity: true }, now, sim: { sseIntervalMs: 20, now } });
    await readEveryAccount(h);
    for (const r of await callAll(h, SESSIONS)) assert.equal(r.headers['x-claude-router-account'], 'a');
    h.sim.injectFault('a', { kind: 'exhaust', window: '7d', resetInMs: 3_600_000 });
    // Sixteen minutes later the answers' evidence is stale, and the poller reads the accounts again.
    offset += 16 * 60_000;
    await readEveryAccount(h);
    assert.equal((await routerStatus(h)).accounts[0].usable, false, 'the poller read a as exhausted');
    h.sim.injectFault('b', { kind: 'slow_first_byte', delayMs: FIRST_BYTE_MS }, SESSIONS.length);
    const since = h.sim.requests.length;

    const results = await callAll(h, SESSIONS);
    for (const r of results) assert.equal(r.headers['x-claude-router-account'], 'b', r.text.slice(0, 200));
    assert.equal(arrivals(h, 'a', since).length, 0, 'no request tried a');
    assertRamp(arrivals(h, 'b', since), 'b');
  });

  it('when the account a herd moves to turns out exhausted too, the held requests go on one by one, not all together', async () => {
    h = await startHarness(accounts('a', 'b', 'c'), { routing: { sessionAffinity: true }, sim: { sseIntervalMs: 20 } });
    await readEveryAccount(h);
    for (const r of await callAll(h, SESSIONS)) assert.equal(r.headers['x-claude-router-account'], 'a');
    h.sim.injectFault('a', { kind: 'exhaust', window: '5h', resetInMs: 3_600_000 });
    h.sim.injectFault('b', { kind: 'exhaust', window: '7d', resetInMs: 3_600_000 });
    h.sim.injectFault('c', { kind: 'slow_first_byte', delayMs: FIRST_BYTE_MS }, SESSIONS.length);
    const since = h.sim.requests.length;

    const results = await callAll(h, SESSIONS);
    for (const r of results) {
      assert.equal(r.status, 200, r.text.slice(0, 200));
      assert.equal(r.headers['x-claude-router-account'], 'c');
    }
    assert.equal(arrivals(h, 'b', since).length, 1, 'one request found b exhausted; the others never went there');
    assertRamp(arrivals(h, 'c', since), 'c');
  });

  it('an account taken again after its cooldown receives its first request alone and the rest as answers succeed', async () => {
    h = await startHarness(accounts('a'), { sim: { sseIntervalMs: 20 } });
    assert.equal((await callRouter(h, { body: STREAM })).status, 200);
    h.sim.injectFault('a', { kind: 'exhaust', window: '5h', resetInMs: 1_500 });
    assert.equal((await callRouter(h, { body: STREAM })).status, 429);
    await eventually(async () => (await routerStatus(h!)).accounts[0].usable === true, 5_000, 'the cooldown to end');
    h.sim.injectFault('a', { kind: 'slow_first_byte', delayMs: FIRST_BYTE_MS }, 10);
    const since = h.sim.requests.length;

    const results = await callAll(h, SESSIONS.slice(0, 10));
    for (const r of results) assert.equal(r.status, 200, r.text.slice(0, 200));
    assertRamp(arrivals(h, 'a', since), 'a');
  });
});
