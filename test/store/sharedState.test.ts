/**
 * Routing state shared through Redis (docs/shared-pool.md), with two BUILT router processes on one
 * real redis-server and the fake upstream: bindings, cooldowns, quota evidence, in-flight counts
 * and reservations, and the leases of a router that was killed.
 */
import { strict as assert } from 'node:assert';
import { storeKeys } from '../../src/store/keys';
import { INFLIGHT_TTL_MS } from '../../src/proxy/state/sharedState';
import { closePool, post, startPool, until, type Pool, type PoolRouter } from '../support/sharedPool';

/** `label`'s row of a router's `/status`. */
async function account(r: PoolRouter, label: string) {
  const a = (await r.status()).accounts.find((x) => x.label === label);
  assert.ok(a, `no account ${label}`);
  return a;
}

/** Messages answers `label` completed so far. */
const served = (pool: Pool, label: string) => pool.sim.account(label).served;

describe('shared pool: routing state (two routers, one redis-server)', function () {
  this.timeout(60_000);
  let pool: Pool | undefined;
  afterEach(async function () {
    await closePool(pool, this.currentTest);
    pool = undefined;
  });

  it('serves a session bound through router 1 on the same account through router 2', async () => {
    // Left alone, router 1 sends new sessions to b and router 2 to a.
    const affinity = '  session-affinity: true';
    pool = await startPool({
      labels: ['a', 'b'],
      routing: [
        [affinity, '  prefer-primary: true', '  primary-account: b'],
        [affinity, '  prefer-primary: true', '  primary-account: a'],
      ],
    });
    const [r1, r2] = pool.routers;
    assert.equal((await post(pool, r2, 'new-on-router-2')).status, 200);
    assert.deepEqual([served(pool, 'a'), served(pool, 'b')], [1, 0], 'router 2 sends a new session to a');

    assert.equal((await post(pool, r1, 'moving-session')).status, 200);
    assert.deepEqual([served(pool, 'a'), served(pool, 'b')], [1, 1], 'router 1 binds the session to b');
    assert.equal((await post(pool, r2, 'moving-session')).status, 200);
    assert.deepEqual([served(pool, 'a'), served(pool, 'b')], [1, 2], 'router 2 serves it on b too');
    assert.equal((await r2.status()).sessions.length, 2, 'router 2 shows both bound sessions of the pool');
  });

  it('honours a cooldown set by one router in the other within a second, and shares the quota evidence', async () => {
    pool = await startPool({
      labels: ['a', 'b'],
      routing: [
        ['  prefer-primary: true', '  primary-account: a'],
        ['  prefer-primary: true', '  primary-account: a'],
      ],
    });
    const [r1, r2] = pool.routers;
    assert.equal((await post(pool, r1, 'warm')).status, 200);
    // Router 1's answer carried a's quota headers: router 2 shows the same evidence.
    const used = (await account(r1, 'a')).session.used;
    assert.ok(used !== null && used > 0, `router 1 read a's 5-hour use (${used})`);
    await until(async () => (await account(r2, 'a')).session.used === used, 1_000, "router 2 to show a's 5-hour use as router 1 read it");

    pool.sim.injectFault('a', { kind: 'throttle', retryAfterS: 60 });
    assert.equal((await post(pool, r1, 'throttled-first')).status, 200, 'router 1 fails over to b');
    const setAt = Date.now();
    const cooling = (await account(r1, 'a')).coolingUntil;
    assert.ok(cooling, 'router 1 cools a down');
    await until(async () => (await account(r2, 'a')).coolingUntil === cooling, 1_000, 'router 2 to show the same cooldown');
    assert.ok(Date.now() - setAt < 1_000);

    const triedA = pool.sim.requests.filter((r) => r.account === 'a' && r.path.startsWith('/v1/messages')).length;
    assert.equal((await post(pool, r2, 'after-cooldown')).status, 200);
    assert.equal(pool.sim.requests.filter((r) => r.account === 'a' && r.path.startsWith('/v1/messages')).length, triedA, 'router 2 does not try the cooled account');
    assert.equal(served(pool, 'b'), 2);
  });

  it('adds up the in-flight counts and reservations of both routers', async () => {
    pool = await startPool({
      labels: ['a', 'b'],
      routing: [
        ['  prefer-primary: true', '  primary-account: a'],
        ['  prefer-primary: true', '  primary-account: a'],
      ],
    });
    const [r1, r2] = pool.routers;
    const single = async () => (await r1.status()).estimation!.accounts.find((x) => x.account === 'a')!;
    pool.sim.injectFault('a', { kind: 'slow_first_byte', delayMs: 3_000 }, 2);
    const one = post(pool, r1, 'slow-1');
    await until(async () => (await account(r1, 'a')).inflight === 1, 2_000, 'router 1 to hold one request on a');
    const reservedOne = (await single()).reserved;
    const total = (c: typeof reservedOne) => c.inputTokens + c.cacheReadTokens + c.cacheWriteTokens + c.outputTokens;
    assert.ok(total(reservedOne) > 0, 'a request reserves its estimated cost');
    const two = post(pool, r2, 'slow-2');
    for (const r of [r1, r2]) await until(async () => (await account(r, 'a')).inflight === 2, 1_000, 'both routers to count both requests on a');
    for (const r of [r1, r2]) {
      const est = (await r.status()).estimation!.accounts.find((x) => x.account === 'a')!;
      assert.equal(est.inflight, 2);
      assert.deepEqual(
        est.reserved,
        {
          inputTokens: 2 * reservedOne.inputTokens,
          cacheReadTokens: 2 * reservedOne.cacheReadTokens,
          cacheWriteTokens: 2 * reservedOne.cacheWriteTokens,
          outputTokens: 2 * reservedOne.outputTokens,
        },
        'the reservations add up',
      );
    }
    assert.deepEqual(
      (await Promise.all([one, two])).map((a) => a.status),
      [200, 200],
    );
    for (const r of [r1, r2]) await until(async () => (await account(r, 'a')).inflight === 0, 1_000, 'the counts to fall back to 0');
  });

  it('shares the concurrency limit one router learned from the upstream', async () => {
    pool = await startPool({
      labels: ['a', 'b'],
      routing: [
        ['  prefer-primary: true', '  primary-account: a'],
        ['  prefer-primary: true', '  primary-account: a'],
      ],
    });
    const [r1, r2] = pool.routers;
    pool.sim.setConcurrencyLimit('a', 1);
    pool.sim.injectFault('a', { kind: 'slow_first_byte', delayMs: 800 }, 3);
    const answers = await Promise.all([1, 2, 3].map((i) => post(pool!, r1, `concurrent-${i}`)));
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200],
    );
    const learned = (await account(r1, 'a')).concurrencyLimit;
    assert.ok(learned !== null, 'router 1 learned a concurrency limit for a');
    await until(async () => (await account(r2, 'a')).concurrencyLimit === learned, 1_000, 'router 2 to hold the same limit');
  });

  it('ends a request whose client leaves while its binding is looked up: nothing sent upstream, no lease left behind', async () => {
    pool = await startPool({ labels: ['a', 'b'], routing: [['  session-affinity: true'], ['  session-affinity: true']] });
    const [r1] = pool.routers;
    // Redis answers nothing for a second: the look-up of the new session's binding waits its full bound.
    await pool.redis.client.call('CLIENT', 'PAUSE', '1000', 'ALL');
    const messagesSent = () => pool!.sim.requests.filter((r) => r.path.startsWith('/v1/messages')).length;
    const sentBefore = messagesSent();
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 150);
    // A large body (it arrives in many chunks, which the router lets go of when its client leaves).
    await assert.rejects(post(pool, r1, 'leaves-early', { signal: ac.signal, text: 'x'.repeat(1 << 20) }));
    await new Promise((r) => setTimeout(r, 1_500));
    const st = await r1.status();
    assert.deepEqual(
      st.accounts.map((a) => a.inflight),
      [0, 0],
      'no lease is left behind',
    );
    assert.equal(st.inflight, 0);
    // Nobody awaits its answer: it spends no quota upstream.
    assert.equal(messagesSent(), sentBefore, 'the request of a client that left was not sent upstream');
    assert.equal((await post(pool, r1, 'after-it')).status, 200);
  });

  it('drops the leases of a router killed mid-request once they expire', async () => {
    pool = await startPool({
      labels: ['a', 'b'],
      routing: [
        ['  prefer-primary: true', '  primary-account: a'],
        ['  prefer-primary: true', '  primary-account: a'],
      ],
    });
    const [r1, r2] = pool.routers;
    pool.sim.injectFault('a', { kind: 'slow_first_byte', delayMs: 30_000 });
    const hanging = post(pool, r1, 'killed-mid-request').catch(() => undefined);
    await until(async () => (await account(r2, 'a')).inflight === 1, 2_000, "router 2 to count router 1's request");
    process.kill(-r1.proc.child.pid!, 'SIGKILL');
    await r1.proc.exited;
    const killedAt = Date.now();
    await hanging;
    await until(async () => (await account(r2, 'a')).inflight === 0, INFLIGHT_TTL_MS + 5_000, 'the killed router’s lease to expire');
    const tookMs = Date.now() - killedAt;
    assert.ok(tookMs <= INFLIGHT_TTL_MS + 4_000, `gone ${tookMs} ms after the kill`);
    const inflightKeys = await pool.redis.client.keys(`${storeKeys.inflightPrefix}*`);
    assert.equal(inflightKeys.length, 1, 'only router 2 has an in-flight record');
    assert.deepEqual(await pool.redis.client.smembers(storeKeys.routers), [inflightKeys[0].slice(storeKeys.inflightPrefix.length)]);
    assert.equal((await post(pool, r2, 'after-the-kill')).status, 200);
  });
});
