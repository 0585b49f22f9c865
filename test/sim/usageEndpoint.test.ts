import assert from 'node:assert/strict';
import type { FakeUpstream } from '../../src/sim';
import { ManualClock, call, closeAll, postMessage, twoAccounts, withSim } from './helpers';

describe('sim: /api/oauth/usage', () => {
  const opened: FakeUpstream[] = [];
  afterEach(() => closeAll(opened));

  it('reports percent 0–100 and ISO resets, matching the fraction in the headers', async () => {
    const clock = new ManualClock();
    const sim = await withSim(opened, {
      now: clock.now,
      accounts: twoAccounts({
        fiveHourLimitTokens: 1000,
        initialFiveHourUsed: 0.25,
        fiveHourResetInMs: 3_600_000,
        initialSevenDayUsed: 0.5,
        scopedWindows: { sonnet: { limitTokens: 1000, initialUsed: 0.1, resetInMs: 7_200_000 } },
      }),
    });
    const r = await call(`${sim.url}/api/oauth/usage`, { headers: { authorization: 'Bearer tok-a', 'anthropic-beta': 'oauth-2025-04-20' } });
    assert.equal(r.status, 200);
    const u = r.json();
    assert.equal(u.five_hour.utilization, 25);
    assert.equal(u.five_hour.resets_at, new Date(clock.t + 3_600_000).toISOString());
    assert.equal(u.seven_day.utilization, 50);
    assert.equal(u.seven_day_sonnet.utilization, 10);
    assert.equal(u.seven_day_sonnet.resets_at, new Date(clock.t + 7_200_000).toISOString());
    assert.equal(u.seven_day_opus, null);
    assert.deepEqual(u.extra_usage.is_enabled, false);
    assert.equal(sim.requests[0].account, 'a');

    const fresh = (await call(`${sim.url}/api/oauth/usage`, { headers: { authorization: 'Bearer tok-b' } })).json();
    assert.deepEqual(fresh.five_hour, { utilization: 0, resets_at: null }, 'window not started yet');

    const m = await postMessage(sim, 'tok-a');
    const frac = Number(m.headers['anthropic-ratelimit-unified-5h-utilization']);
    const after = (await call(`${sim.url}/api/oauth/usage`, { headers: { authorization: 'Bearer tok-a' } })).json();
    assert.ok(Math.abs(after.five_hour.utilization - frac * 100) < 0.05, `${after.five_hour.utilization} vs ${frac}`);
    assert.ok(after.five_hour.utilization > 25);
  });

  it('answers 403 when the account has no usage endpoint and 401 for a bad token', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts({ usageEndpoint: false }) });
    const r = await call(`${sim.url}/api/oauth/usage`, { headers: { authorization: 'Bearer tok-a' } });
    assert.equal(r.status, 403);
    assert.equal(r.json().error.type, 'permission_error');
    assert.equal((await call(`${sim.url}/api/oauth/usage`, { headers: { authorization: 'Bearer tok-b' } })).status, 200);
    assert.equal((await call(`${sim.url}/api/oauth/usage`, { headers: { authorization: 'Bearer nope' } })).status, 401);
  });
});
