import { strict as assert } from 'node:assert';
import { noUsableAccountAnswer } from '../../../src/proxy/pipeline/noUsableAccount';
import type { Cooldown } from '../../../src/quota/types';
import { DAY, HOUR, NOW, SEC, cooldownFor, metricsOf, snap, type MetricsOpts, type SnapSpec } from '../../routing/builders';

/** One account of the pool as the engine hands it over: metrics through the real computeMetrics. */
function account(label: string, snapSpec: SnapSpec | null, o: MetricsOpts = {}) {
  const snapshot = snapSpec === null ? undefined : snap(snapSpec);
  return { label, metrics: metricsOf(snapshot, o), cooldown: cooldownFor(o), snapshot };
}

const windowCooldown = (window: '5h' | '7d', inMs: number): Cooldown => ({ untilMs: NOW + inMs, reason: 'window_exhausted', windows: [window], setAtMs: NOW - SEC });
/** The window the answer names to Claude Code (`anthropic-ratelimit-unified-representative-claim`). */
const claimOf = (answer: { windowHeaders: Record<string, string> }) => answer.windowHeaders['anthropic-ratelimit-unified-representative-claim'];
const rejected = (resetIn: number) => ({ status: 'rejected', used: 1, resetIn });

describe('no usable account: the earliest time every blocker of one account clears', () => {
  it('a 10 s throttle on an account whose weekly window is rejected for 3 days does not hide it: b in 1 h wins', () => {
    const a = account('a', { unified: 'rejected', unifiedResetIn: 3 * DAY, w: rejected(3 * DAY) }, { coolIn: 10 * SEC });
    const b = account('b', { unified: 'rejected', unifiedResetIn: HOUR, s: rejected(HOUR) }, { cooldown: windowCooldown('5h', HOUR) });
    const answer = noUsableAccountAnswer([a, b], NOW);
    assert.equal(answer.status, 429);
    assert.equal(answer.retryAfterS, 3600);
    assert.match(answer.message, /"b" \(5h window\)/);
    assert.equal(claimOf(answer), 'five_hour');
  });

  it('names the latest blocker of the winning account (its 7d window, not its throttle)', () => {
    const a = account('a', { unified: 'rejected', unifiedResetIn: 2 * HOUR, w: rejected(2 * HOUR) }, { coolIn: 10 * SEC });
    const b = account('b', null, { cooldown: windowCooldown('7d', 5 * HOUR) });
    const answer = noUsableAccountAnswer([a, b], NOW);
    assert.equal(answer.retryAfterS, 2 * 3600);
    assert.match(answer.message, /"a" \(7d window\)/);
    assert.equal(claimOf(answer), 'seven_day');
  });

  it("waits for the requested model's scoped window, not for another model's", () => {
    const scopedSonnet: SnapSpec = { scoped: { sonnet: rejected(2 * DAY) } };
    const b = account('b', null, { cooldown: windowCooldown('5h', HOUR) });
    const forSonnet = noUsableAccountAnswer([account('a', scopedSonnet, { coolIn: 10 * SEC, family: 'sonnet' }), b], NOW);
    assert.equal(forSonnet.retryAfterS, 3600);
    assert.match(forSonnet.message, /"b" \(5h window\)/);
    const forOpus = noUsableAccountAnswer([account('a', scopedSonnet, { coolIn: 10 * SEC, family: 'opus' }), b], NOW);
    assert.equal(forOpus.retryAfterS, 10);
    assert.match(forOpus.message, /"a" \(throttle\)/);
  });

  it('an overload pause does not stand for an account that also waits for a usage window', () => {
    const overloaded = (inMs: number): Cooldown => ({ untilMs: NOW + inMs, reason: 'overloaded', setAtMs: NOW - SEC });
    const a = account('a', { unified: 'rejected', unifiedResetIn: HOUR, s: rejected(HOUR) }, { cooldown: overloaded(5 * SEC) });
    const b = account('b', null, { cooldown: overloaded(30 * SEC) });
    const answer = noUsableAccountAnswer([a, b], NOW);
    assert.equal(answer.status, 529);
    assert.equal(answer.retryAfterS, 30);
    assert.match(answer.message, /"b"/);
  });

  it('an account that needs sign-in never recovers by waiting, even with a short cooldown', () => {
    const a = account('a', null, { coolIn: 10 * SEC, needsSignIn: true });
    const b = account('b', null, { cooldown: windowCooldown('5h', HOUR) });
    const answer = noUsableAccountAnswer([a, b], NOW);
    assert.equal(answer.retryAfterS, 3600);
    assert.match(answer.message, /"b" \(5h window\)/);
  });

  it('a rejection with no known reset makes that account unknown, so a known recovery elsewhere wins', () => {
    const a = account('a', { unified: 'rejected' }, { coolIn: 10 * SEC });
    const b = account('b', null, { cooldown: windowCooldown('5h', HOUR) });
    const answer = noUsableAccountAnswer([a, b], NOW);
    assert.equal(answer.retryAfterS, 3600);
    assert.match(answer.message, /"b" \(5h window\)/);
  });

  it('says the recovery is unknown when no account has a known end to all its blockers', () => {
    const a = account('a', { unified: 'rejected' }, { coolIn: 10 * SEC });
    const b = account('b', null, { needsSignIn: true });
    const answer = noUsableAccountAnswer([a, b], NOW);
    assert.equal(answer.status, 429);
    assert.equal(answer.type, 'rate_limit_error');
    assert.match(answer.message, /unknown — sign in or wait for fresh quota data/);
    assert.match(answer.message, /"a" \(unified window, no known reset\)/);
    assert.match(answer.message, /"b" \(needs sign-in\)/);
  });

  it('answers 401 when every account needs sign-in', () => {
    const answer = noUsableAccountAnswer([account('a', null, { needsSignIn: true }), account('b', null, { needsSignIn: true, coolIn: 5 * SEC })], NOW);
    assert.equal(answer.status, 401);
    assert.equal(answer.retryAfterS, undefined);
  });

  it('claims a usage window for every usage-window blocker, so Claude Code says the limit is reached: the model-scoped one by its family', () => {
    const scoped = account('a', { scoped: { opus: rejected(2 * DAY) } }, { family: 'opus' });
    const opus = noUsableAccountAnswer([scoped], NOW, 'opus');
    assert.equal(opus.status, 429);
    assert.equal(opus.windowHeaders['anthropic-ratelimit-unified-status'], 'rejected');
    assert.equal(claimOf(opus), 'seven_day_opus');
    assert.equal(opus.windowHeaders['anthropic-ratelimit-unified-reset'], String(Math.ceil((NOW + 2 * DAY) / 1000)));
    const both = account('b', null, { cooldown: { untilMs: NOW + 2 * DAY, reason: 'window_exhausted', windows: ['5h', '7d'], setAtMs: NOW - SEC } });
    assert.equal(claimOf(noUsableAccountAnswer([both], NOW)), 'seven_day', 'both windows out: it waits for the weekly one');
    const unified = (inMs: number) => account('u', null, { cooldown: { untilMs: NOW + inMs, reason: 'window_exhausted', windows: ['unified'], setAtMs: NOW - SEC } });
    assert.equal(claimOf(noUsableAccountAnswer([unified(2 * HOUR)], NOW)), 'five_hour', 'an account-wide rejection resetting within 5 h');
    assert.equal(claimOf(noUsableAccountAnswer([unified(2 * DAY)], NOW)), 'seven_day');
  });
});

describe('no usable account within the client-retry horizon: a pause keeps Claude Code retrying', () => {
  const TEN_MIN = 10 * 60 * SEC;
  const windowHeaderNames = (answer: { windowHeaders: Record<string, string> }) => Object.keys(answer.windowHeaders).filter((k) => k.startsWith('anthropic-ratelimit-unified-'));

  it('every account throttled for 100 s: 429 rate_limit_error, retry-after 60 (Claude Code waits that out; 100 made it stop), the real wait and the first account named', () => {
    const answer = noUsableAccountAnswer([account('a', null, { coolIn: 120 * SEC }), account('b', null, { coolIn: 100 * SEC })], NOW, undefined, TEN_MIN);
    assert.equal(answer.status, 429);
    assert.equal(answer.type, 'rate_limit_error');
    assert.equal(answer.retryAfterS, 60);
    assert.deepEqual(windowHeaderNames(answer), []);
    assert.match(answer.message, /"b" \(throttle\) at .*, in 1 min 40 s; retry in 60 s/);
  });

  it('a 5-hour window resetting in 8 min on one account, the other throttled for 20 min: retried, not claimed', () => {
    const soon = account('a', null, { cooldown: windowCooldown('5h', 8 * 60 * SEC) });
    const throttled = account('b', null, { coolIn: 20 * 60 * SEC });
    const answer = noUsableAccountAnswer([throttled, soon], NOW, undefined, TEN_MIN);
    assert.equal(answer.status, 429);
    assert.equal(answer.retryAfterS, 60);
    assert.deepEqual(windowHeaderNames(answer), [], 'no rejected window: Claude Code must not say the limit is reached');
    assert.match(answer.message, /"a" \(5h window\) .*in 8 min; retry in 60 s/);
  });

  it('every account held by a usage window: the claim of the first to clear, even within the horizon', () => {
    const soon = account('a', null, { cooldown: windowCooldown('5h', 8 * 60 * SEC) });
    const later = account('b', null, { cooldown: windowCooldown('7d', 3 * DAY) });
    const answer = noUsableAccountAnswer([later, soon], NOW, undefined, TEN_MIN);
    assert.equal(answer.retryAfterS, 8 * 60);
    assert.equal(claimOf(answer), 'five_hour');
    assert.match(answer.message, /"a" \(5h window\) .*in 8 min\.$/);
  });

  it('past the horizon the answer is final: the whole wait, and the claim of the account that clears first', () => {
    const answer = noUsableAccountAnswer(
      [account('a', null, { cooldown: windowCooldown('5h', 3 * HOUR) }), account('b', null, { cooldown: windowCooldown('5h', 2 * HOUR) })],
      NOW,
      undefined,
      TEN_MIN,
    );
    assert.equal(answer.retryAfterS, 2 * 3600);
    assert.equal(claimOf(answer), 'five_hour');
    assert.equal(answer.windowHeaders['anthropic-ratelimit-unified-reset'], String(Math.ceil((NOW + 2 * HOUR) / 1000)));
    assert.match(answer.message, /"b" \(5h window\)/);
    const throttle = noUsableAccountAnswer([account('a', null, { coolIn: 11 * 60 * SEC })], NOW, undefined, TEN_MIN);
    assert.equal(throttle.retryAfterS, 11 * 60, 'a throttle past the horizon: its real length');
    assert.deepEqual(windowHeaderNames(throttle), []);
  });

  it('an overload within the horizon stays a 529 (Anthropic trouble), its retry-after capped at 60 s', () => {
    const overloaded: Cooldown = { untilMs: NOW + 90 * SEC, reason: 'overloaded', setAtMs: NOW - SEC };
    const answer = noUsableAccountAnswer([account('a', null, { cooldown: overloaded })], NOW, undefined, TEN_MIN);
    assert.equal(answer.status, 529);
    assert.equal(answer.retryAfterS, 60);
    assert.match(answer.message, /in 1 min 30 s; retry in 60 s/);
  });

  it('with the horizon off (0) every wait is final, as before: a 100 s throttle gets retry-after 100, an 8 min window its claim', () => {
    assert.equal(noUsableAccountAnswer([account('a', null, { coolIn: 100 * SEC })], NOW, undefined, 0).retryAfterS, 100);
    const w = noUsableAccountAnswer([account('a', null, { cooldown: windowCooldown('5h', 8 * 60 * SEC) })], NOW, undefined, 0);
    assert.equal(claimOf(w), 'five_hour');
    assert.equal(w.retryAfterS, 8 * 60);
  });
});
