import { strict as assert } from 'node:assert';
import { AccountPerformance, isAccountFailure } from '../../../src/proxy/state/accountPerformance';
import { LATENCY_WINDOW_MS, type LatencySample } from '../../../src/routing/planner/latency';

const NOW = Date.UTC(2025, 10, 4, 12, 0, 0);

/** `n` small-turn sonnet samples of `firstTokenMs`, ending at NOW. */
function samples(n: number, firstTokenMs: number): LatencySample[] {
  return Array.from({ length: n }, (_, i) => ({ atMs: NOW - i * 1000, firstTokenMs, uncachedInputTokens: 500, outputTokensPerS: undefined, family: 'sonnet' }));
}

describe('proxy/state AccountPerformance', () => {
  it('error rate: the failed share of the last 20 attempts within the hour', () => {
    const p = new AccountPerformance();
    for (let i = 0; i < 30; i++) p.recordAttempt('a', NOW - 1000 + i, i >= 25);
    assert.equal(p.recentErrorRate('a', NOW), 5 / 20);
    assert.equal(p.recentErrorRate('a', NOW + LATENCY_WINDOW_MS + 1000), 0, 'attempts older than an hour do not count');
    assert.equal(p.recentErrorRate('never', NOW), 0);
  });

  it('latency factors follow a new sample at once, and forget a removed account', () => {
    const p = new AccountPerformance();
    for (const [id, ms] of [
      ['a', 1000],
      ['b', 1000],
      ['c', 1000],
    ] as const)
      for (const s of samples(8, ms)) p.recordTurn(id, s);
    assert.equal(p.latencyFactors(NOW, 'sonnet').size, 0);
    for (const s of samples(16, 9000)) p.recordTurn('c', s);
    assert.equal(p.latencyFactors(NOW, 'sonnet').get('c'), 0.5, 'the new samples are read within the same second');
    p.forgetAccount('c');
    assert.equal(p.latencyFactors(NOW, 'sonnet').size, 0);
  });

  it("keeps the newest 64 turns of an account: each new turn takes the oldest one's place", () => {
    const p = new AccountPerformance();
    for (const id of ['a', 'b']) for (const s of samples(8, 1000)) p.recordTurn(id, s);
    for (const s of samples(64, 1000)) p.recordTurn('c', s);
    assert.equal(p.latencyFactors(NOW, 'sonnet').has('c'), false);
    for (const s of samples(64, 9000)) p.recordTurn('c', s);
    assert.equal(p.latencyFactors(NOW, 'sonnet').get('c'), 0.5, 'the 64 slow turns replaced the 64 fast ones');
    for (const s of samples(33, 1000)) p.recordTurn('c', s);
    assert.equal(p.latencyFactors(NOW, 'sonnet').has('c'), false, '33 fast turns of the newest 64: the median is fast again');
  });

  it('counts upstream trouble and throttles as failures, not exhaustion, client errors or aborts', () => {
    for (const r of ['throttle', 'overloaded', 'server_error', 'network_error', 'stream_failed']) assert.equal(isAccountFailure(r), true, r);
    for (const r of ['success', 'window_exhausted', 'model_scoped_exhausted', 'client_error', 'request_scoped', 'client_abort']) assert.equal(isAccountFailure(r), false, r);
  });
});
