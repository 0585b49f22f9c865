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
