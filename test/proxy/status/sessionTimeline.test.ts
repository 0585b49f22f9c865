/**
 * The session timeline the status panel draws, from the decision records the running proxy
 * writes: which account served each request of a session, and why the session switched.
 */
import { strict as assert } from 'node:assert';
import { accounts, callRouter, startHarness, type Harness } from '../../support/routerHarness';
import { sessionTimeline } from '../../../src/routing/sessionTimeline';
import { stickyKeyHash } from '../../../src/routing/identify';
import { switchText } from '../../../src/proxy/status/panelData';

describe('session timeline: which account served each request of a session, and why it switched', () => {
  let h: Harness;
  afterEach(() => h?.close());

  /** Sends `n` requests of session `id` and returns the accounts that served them. */
  async function turns(id: string, n: number): Promise<string[]> {
    const served: string[] = [];
    for (let i = 0; i < n; i++) served.push((await callRouter(h, { session: id })).headers['x-claude-router-account']);
    return served;
  }

  it('a bound session whose account runs out of its 5-hour window moves on: the switch says quota', async () => {
    h = await startHarness(accounts('a', 'b'), { routing: { sessionAffinity: true } });
    await turns('conv-quota', 2);
    h.sim.injectFault('a', { kind: 'exhaust', window: '5h', resetInMs: 3_600_000 });
    assert.deepEqual(await turns('conv-quota', 2), ['b', 'b']);
    await h.router.close();
    const [lane] = sessionTimeline(h.decisions());
    assert.equal(lane.hash, stickyKeyHash('conv-quota'));
    assert.deepEqual(
      lane.requests.map((q) => q.account),
      ['a', 'a', 'b', 'b'],
    );
    assert.deepEqual(
      lane.requests.map((q) => q.switched),
      [false, false, true, false],
    );
    assert.equal(lane.requests[2].cause, 'quota');
    assert.equal(lane.requests[2].causeCode, 'window_exhausted');
    assert.equal(switchText('quota', 'window_exhausted'), 'quota (window exhausted)', 'in words on the panel');
    assert.equal(lane.switches, 1);
    assert.deepEqual(lane.accounts, ['a', 'b']);
  });

  it('a throttled account makes the session fail over, and the next session skips it: both switches say transient error (throttle)', async () => {
    h = await startHarness(accounts('a', 'b'), { routing: { sessionAffinity: true } });
    await turns('conv-throttle', 1);
    await turns('conv-throttle-2', 1);
    h.sim.injectFault('a', { kind: 'throttle', retryAfterS: 30 });
    await turns('conv-throttle', 1);
    await turns('conv-throttle-2', 1);
    await h.router.close();
    const lanes = sessionTimeline(h.decisions());
    const byHash = (id: string) => lanes.find((l) => l.hash === stickyKeyHash(id))!;
    // The first fails over (its attempt on a is throttled); the second finds a cooling and skips it.
    assert.deepEqual(
      byHash('conv-throttle').requests.map((q) => [q.account, q.cause, q.causeCode]),
      [
        ['a', null, null],
        ['b', 'transient', 'throttle'],
      ],
    );
    assert.deepEqual(
      byHash('conv-throttle-2').requests.map((q) => [q.account, q.cause, q.causeCode]),
      [
        ['a', null, null],
        ['b', 'transient', 'throttle'],
      ],
    );
    assert.equal(switchText('transient', 'throttle'), 'transient error (throttle)');
  });

  it('a bound account that needs sign-in is skipped: the switch says sign-in', async () => {
    h = await startHarness(accounts('a', 'b'), { routing: { sessionAffinity: true } });
    await turns('conv-signin', 1);
    h.router.engine.state.markNeedsSignIn('a', 'refresh token was rejected (invalid_grant)');
    assert.deepEqual(await turns('conv-signin', 1), ['b']);
    await h.router.close();
    const [lane] = sessionTimeline(h.decisions());
    assert.equal(lane.requests[1].cause, 'sign_in');
    assert.equal(lane.requests[1].causeCode, 'needs_sign_in');
  });

  it('over the sticky threshold the session is moved on purpose: the switch says sticky threshold', async () => {
    const spec = [
      { label: 'a', accessToken: 'sk-ant-oat01-test-a', refreshToken: 'sk-ant-ort01-test-a', initialSevenDayUsed: 0.75, sevenDayResetInMs: 2 * 86_400_000 },
      { label: 'b', accessToken: 'sk-ant-oat01-test-b', refreshToken: 'sk-ant-ort01-test-b', initialSevenDayUsed: 0.2, sevenDayResetInMs: 3 * 86_400_000 },
    ];
    h = await startHarness(spec, { routing: { sessionAffinity: true, stickyThreshold7d: 70 } });
    await turns('conv-sticky', 2);
    await h.router.close();
    const [lane] = sessionTimeline(h.decisions());
    assert.deepEqual(
      lane.requests.map((q) => [q.account, q.cause]),
      [
        ['a', null],
        ['b', 'sticky_threshold'],
      ],
    );
  });

  it('without affinity round-robin moves every request: each switch says not bound; lanes are newest first, by hash only', async () => {
    h = await startHarness(accounts('a', 'b'), { routing: { strategy: 'round-robin' } });
    await turns('older-session-raw-id', 1);
    await turns('newer-session-raw-id', 3);
    await h.router.close();
    const lanes = sessionTimeline(h.decisions());
    assert.deepEqual(
      lanes.map((l) => l.hash),
      [stickyKeyHash('newer-session-raw-id'), stickyKeyHash('older-session-raw-id')],
    );
    assert.deepEqual(
      lanes[0].requests.map((q) => q.cause),
      [null, 'unbound', 'unbound'],
    );
    assert.equal(lanes[0].switches, 2);
    assert.ok(!JSON.stringify(lanes).includes('raw-id'), 'no raw session id in the timeline');
  });
});
