import { strict as assert } from 'node:assert';
import { LIMIT_FORGET_AFTER_MS, RATE_THROTTLE_PAUSE_MS, limitAfterSuccess, limitAfterThrottle, liveLimit, type LearnedLimit } from '../../src/routing/concurrencyLimit';

const NOW = Date.UTC(2026, 0, 5, 12);

/** A throttle sent and answered with `inflight` in flight. */
const throttle = (l: LearnedLimit | undefined, inflight: number, now = NOW) => limitAfterThrottle(l, inflight, inflight, now);

/** Successes sent with `inflight` in flight, one after another. */
function succeed(l: LearnedLimit | undefined, times: number, inflight: (l: LearnedLimit) => number): LearnedLimit | undefined {
  for (let i = 0; i < times && l; i++) l = limitAfterSuccess(l, inflight(l));
  return l;
}

describe('routing/concurrencyLimit', () => {
  it('a throttle sets the limit one below the in-flight count it was sent with', () => {
    assert.equal(throttle(undefined, 5).limit, 4);
    assert.equal(throttle(throttle(undefined, 5), 3).limit, 2);
  });

  it('the throttles of one over-full moment cut once: one sent above the limit (before the cut) changes nothing', () => {
    const cut = throttle(undefined, 3);
    for (const sent of [4, 5, 8]) assert.deepEqual(throttle(cut, sent, NOW + 1), cut, `sent with ${sent}`);
  });

  it('a throttle with nothing else in flight keeps the limit at 1 and pauses the account for about a second', () => {
    const l = throttle(throttle(undefined, 2), 1, NOW + 10);
    assert.equal(l.limit, 1);
    assert.equal(l.pausedUntilMs, NOW + 10 + RATE_THROTTLE_PAUSE_MS);
    assert.equal(RATE_THROTTLE_PAUSE_MS, 1_000);
  });

  it('rises by one after `limit` successes with the limit in full use; successes below it prove nothing', () => {
    const l = throttle(undefined, 4); // limit 3
    assert.deepEqual(
      succeed(l, 10, () => 2),
      l,
      'below the limit',
    );
    assert.equal(succeed(l, 2, (x) => x.limit)?.limit, 3);
    assert.equal(succeed(l, 3, (x) => x.limit)?.limit, 4);
  });

  it('is forgotten once it has risen past the in-flight count at its last throttle’s answer', () => {
    const l = throttle(undefined, 4); // limit 3, refused with 4 running
    assert.equal(succeed(l, 3 + 3, (x) => x.limit)?.limit, 4);
    assert.equal(
      succeed(l, 3 + 4, (x) => x.limit),
      undefined,
    );
    // Sent with 2 (others of the burst reached the upstream first), answered with 6 running: forgotten only past 6.
    const burst = limitAfterThrottle(undefined, 2, 6, NOW);
    assert.equal(burst.limit, 1);
    assert.equal(succeed(burst, 1 + 2 + 3 + 4 + 5, (x) => x.limit)?.limit, 6);
    assert.equal(
      succeed(burst, 1 + 2 + 3 + 4 + 5 + 6, (x) => x.limit),
      undefined,
    );
  });

  it('a probe throttled at the raised limit brings it back down, so a fixed upstream limit holds', () => {
    let l: LearnedLimit | undefined = throttle(undefined, 3); // limit 2
    for (let round = 0; round < 5; round++) {
      l = succeed(l, 2, (x) => x.limit)!;
      assert.equal(l.limit, 3);
      l = throttle(l, 3, NOW + round);
      assert.equal(l.limit, 2);
    }
  });

  it('is forgotten after ten minutes without a throttle', () => {
    const l = throttle(undefined, 3);
    assert.equal(liveLimit(l, NOW + LIMIT_FORGET_AFTER_MS - 1), l);
    assert.equal(liveLimit(l, NOW + LIMIT_FORGET_AFTER_MS), undefined);
    assert.equal(LIMIT_FORGET_AFTER_MS, 600_000);
  });
});
