import { strict as assert } from 'node:assert';
import { mayProbe, probeEnded, probeKindOf, probeStarted, PROBE_BACKOFF_MAX_MS, type ProbeRecord } from '../../src/routing/probe';
import type { Cooldown } from '../../src/quota/types';
import { DAY, HOUR, MIN, NOW, metricsOf, snap } from './builders';

describe('routing/probe: one re-check in flight per account, backing off when it fails', () => {
  it('no second probe while one is in flight', () => {
    const started = probeStarted(undefined);
    assert.equal(mayProbe(undefined, NOW), true);
    assert.equal(mayProbe(started, NOW), false);
    assert.equal(mayProbe(started, NOW + DAY), false, 'in flight, however long');
  });

  it('each failure doubles the back-off from 1 minute, up to 1 hour; a success forgets the failures', () => {
    let r: ProbeRecord | undefined;
    const waits: number[] = [];
    let t = NOW;
    for (let i = 0; i < 9; i++) {
      r = probeEnded(probeStarted(r), false, t);
      waits.push(r!.notBeforeMs - t);
      assert.equal(mayProbe(r, r!.notBeforeMs - 1), false);
      assert.equal(mayProbe(r, r!.notBeforeMs), true);
      t = r!.notBeforeMs;
    }
    assert.deepEqual(
      waits.map((w) => w / MIN),
      [1, 2, 4, 8, 16, 32, 60, 60, 60],
    );
    assert.equal(PROBE_BACKOFF_MAX_MS, HOUR);
    assert.equal(probeEnded(probeStarted(r), true, t), undefined, 'a success starts from scratch');
  });

  it('a probe that never reached the account frees its slot and changes nothing else', () => {
    const failed = probeEnded(probeStarted(undefined), false, NOW)!;
    const again = probeEnded(probeStarted(failed), undefined, NOW + HOUR);
    assert.deepEqual(again, { ...failed, inFlight: false });
    assert.equal(probeEnded(probeStarted(undefined), undefined, NOW), undefined);
  });
});

describe('routing/probe: which accounts a probe re-checks', () => {
  const cooled = (windows = ['7d']): Cooldown => ({ untilMs: NOW + 3 * DAY, reason: 'window_exhausted', setAtMs: NOW - 10 * MIN, windows });
  const facts = (over: Partial<Parameters<typeof probeKindOf>[0]>) => ({
    metrics: metricsOf(undefined),
    cooldown: undefined,
    snapshot: undefined,
    needsSignIn: false,
    reportsQuota: true,
    ...over,
  });

  it('a window cooldown whose window reads recovered: a recovery probe', () => {
    const reading = snap({ source: 'usage', age: MIN, w: { used: 0, status: 'allowed', resetIn: 7 * DAY } });
    const cooldown = cooled();
    assert.equal(probeKindOf(facts({ metrics: metricsOf(reading, { cooldown }), cooldown, snapshot: reading }), NOW), 'recovery');
  });

  it('no recovery probe while the evidence shows a rejected window, for a throttle, or for an account that needs sign-in', () => {
    const rejected = snap({ source: 'usage', age: MIN, w: { used: 1, status: 'rejected', resetIn: 3 * DAY } });
    const cooldown = cooled();
    assert.equal(probeKindOf(facts({ metrics: metricsOf(rejected, { cooldown }), cooldown, snapshot: rejected }), NOW), undefined);
    const fine = snap({ source: 'usage', age: MIN, w: { used: 0 } });
    const throttle: Cooldown = { ...cooldown, reason: 'throttle' };
    assert.equal(probeKindOf(facts({ metrics: metricsOf(fine, { cooldown: throttle }), cooldown: throttle, snapshot: fine }), NOW), undefined);
    assert.equal(probeKindOf(facts({ metrics: metricsOf(fine, { cooldown, needsSignIn: true }), cooldown, snapshot: fine, needsSignIn: true }), NOW), undefined);
  });

  it('a usable account with no quota evidence: an evidence probe — unless it reports no quota (an API key)', () => {
    assert.equal(probeKindOf(facts({}), NOW), 'evidence');
    assert.equal(probeKindOf(facts({ reportsQuota: false }), NOW), undefined);
    assert.equal(probeKindOf(facts({ metrics: metricsOf(snap()) }), NOW), undefined, 'known quota needs no probe');
  });
});
