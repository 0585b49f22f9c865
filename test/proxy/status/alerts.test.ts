/**
 * The alerts a window shows, decided from the running proxy's `/status`: once per episode, never a
 * storm while the condition lasts, and again only after it ended and came back.
 */
import { strict as assert } from 'node:assert';
import { AlertEpisodes, EXHAUSTED_MIN_WAIT_MS } from '../../../src/proxy/status/alerts';
import { accounts, callRouter, routerStatus, startHarness, type Harness } from '../../support/routerHarness';

describe('alerts: once per episode, from the running proxy', () => {
  let h: Harness;
  afterEach(() => h?.close());

  it('an account that needs sign-in is announced once, and again only after it signed in and lost it again', async () => {
    h = await startHarness(accounts('a', 'b'));
    const alerts = new AlertEpisodes();
    assert.deepEqual(alerts.next(await routerStatus(h), Date.now()), []);
    h.router.engine.state.markNeedsSignIn('a', 'refresh token was rejected (invalid_grant)');
    assert.deepEqual(alerts.next(await routerStatus(h), Date.now()), [{ kind: 'needs_sign_in', accounts: [{ label: 'a', reason: 'refresh token was rejected (invalid_grant)' }] }]);
    await callRouter(h);
    assert.deepEqual(alerts.next(await routerStatus(h), Date.now()), [], 'not again while it lasts');
    h.router.engine.state.clearNeedsSignIn('a');
    assert.deepEqual(alerts.next(await routerStatus(h), Date.now()), []);
    h.router.engine.state.markNeedsSignIn('a', 'upstream rejected the credentials (401)');
    assert.equal(alerts.next(await routerStatus(h), Date.now())[0]?.kind, 'needs_sign_in', 'a new episode');
  });

  it('every account used up is announced once, with the first recovery, and not for a pause of seconds', async () => {
    h = await startHarness(accounts('a', 'b'));
    const alerts = new AlertEpisodes();
    const now = Date.now();
    h.router.engine.state.setCooldown('a', { untilMs: now + 10_000, reason: 'throttle', setAtMs: now });
    h.router.engine.state.setCooldown('b', { untilMs: now + 20_000, reason: 'throttle', setAtMs: now });
    assert.deepEqual(alerts.next(await routerStatus(h), now), [], `a wait under ${EXHAUSTED_MIN_WAIT_MS} ms is no news`);
    h.router.engine.state.setCooldown('a', { untilMs: now + 2 * 3_600_000, reason: 'window_exhausted', setAtMs: now });
    h.router.engine.state.setCooldown('b', { untilMs: now + 3 * 3_600_000, reason: 'window_exhausted', setAtMs: now });
    const [alert] = alerts.next(await routerStatus(h), now);
    assert.equal(alert.kind, 'pool_exhausted');
    assert.ok(alert.kind === 'pool_exhausted');
    assert.equal(alert.account, 'a');
    assert.equal(alert.total, 2);
    assert.equal(alert.upstreamTrouble, false);
    assert.ok(Math.abs(alert.untilMs! - (now + 2 * 3_600_000)) < 1000, 'until the first account recovers');
    assert.deepEqual(alerts.next(await routerStatus(h), now + 60_000), [], 'not again while it lasts');
    h.router.engine.state.cooldowns.delete('a'); // its window reset: usable again
    assert.deepEqual(alerts.next(await routerStatus(h), now + 120_000), []);
    h.router.engine.state.setCooldown('a', { untilMs: now + 2 * 3_600_000, reason: 'overloaded', setAtMs: now });
    const [again] = alerts.next(await routerStatus(h), now + 180_000);
    assert.ok(again?.kind === 'pool_exhausted' && again.upstreamTrouble, 'a new episode: Anthropic overloaded');
  });

  it('a pool where every account needs sign-in gets the sign-in alert only', async () => {
    h = await startHarness(accounts('a'));
    const alerts = new AlertEpisodes();
    h.router.engine.state.markNeedsSignIn('a', 'no usable credentials');
    assert.deepEqual(
      alerts.next(await routerStatus(h), Date.now()).map((a) => a.kind),
      ['needs_sign_in'],
    );
  });
});
