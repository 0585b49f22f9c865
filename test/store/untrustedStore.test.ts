/**
 * Redis is untrusted input (docs/security.md#the-shared-store): someone who can write the pool's
 * Redis but does not hold its key writes and publishes forged records (issue 35, findings 1–4),
 * through two built routers (`node dist/cli.js start`) on a real redis-server. Every router stays
 * up, `/status` answers 200 and requests are served; a rolled-back pair is refused after a restart.
 */
import { strict as assert } from 'node:assert';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { request } from 'undici';
import { isoTime } from '../../src/quota/time';
import { storeKeys } from '../../src/store/keys';
import { closePool, post, startPool, until, type Pool, type PoolRouter } from '../support/sharedPool';

const DAY = 86_400_000;
/** 2100-01-01, epoch ms. */
const YEAR_2100 = 4_102_444_800_000;

/** `/status` of `router`: its HTTP status and report. */
async function statusOf(pool: Pool, router: PoolRouter): Promise<{ code: number; body: string }> {
  const res = await request(`${router.url}/status`, { headers: { 'x-claude-router-key': pool.clientKey } });
  return { code: res.statusCode, body: await res.body.text() };
}

/** Both routers are running, answer `/status` with 200 and serve a request; @returns their status reports */
async function assertServing(pool: Pool, what: string): Promise<void> {
  for (const [i, r] of pool.routers.entries()) {
    assert.equal(r.proc.child.exitCode, null, `router ${i + 1} is running (${what})`);
    const s = await statusOf(pool, r);
    assert.equal(s.code, 200, `router ${i + 1}: /status ${s.code} ${s.body.slice(0, 300)} (${what})`);
    const answer = await post(pool, r, `${what}-${i}`);
    assert.equal(answer.status, 200, `router ${i + 1} serves (${what}): ${answer.text.slice(0, 300)}`);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('shared pool: Redis is untrusted input (forged records, two routers)', function () {
  this.timeout(90_000);
  let pool: Pool | undefined;
  afterEach(async function () {
    await closePool(pool, this.currentTest);
    pool = undefined;
  });

  it('a forged in-flight record ({"a":5}, {"a":[1e308,null]}) stops no router, now or after a restart, and saturates nothing', async () => {
    pool = await startPool({ labels: ['a', 'b'] });
    const redis = pool.redis.client;
    await redis.set(`${storeKeys.inflightPrefix}evil`, '{"a":5}');
    await redis.set(`${storeKeys.inflightPrefix}evil2`, '{"a":[1e308,null]}');
    await redis.sadd(storeKeys.routers, 'evil', 'evil2');
    await redis.publish(storeKeys.channel, JSON.stringify({ r: 'evil', k: 'i' }));
    // Past a heartbeat (3 s): every router has gathered the records.
    await sleep(4_000);
    await assertServing(pool, 'after the forged in-flight records');
    for (const r of pool.routers) {
      // The routers' own requests leave their records within a flush; a forged count would stay.
      let seen = '';
      await until(
        async () => {
          const s = await r.status();
          seen = JSON.stringify(s.accounts.map((a) => [a.label, a.inflight]));
          return s.accounts.every((a) => a.inflight === 0);
        },
        3_000,
        () => `no forged request counts: ${seen}`,
      );
      // Logged once, though every gather (each 3 s, and on every change) meets it again.
      assert.equal(r.log().match(/ignored an in-flight record in claude-router:inflight:evil: unsigned/g)?.length, 1, r.log());
    }
    // The records have no expiry: a restarted router meets them again and keeps running.
    await pool.routers[1].proc.stop();
    await pool.routers[1].restart();
    await sleep(4_000);
    await assertServing(pool, 'after a restart');
  });

  it('forged quota evidence (observed at 9e15, rejected until 2100) written and published changes nothing: /status 200, requests served, nothing persisted', async () => {
    pool = await startPool({ labels: ['a'] });
    const redis = pool.redis.client;
    const forged = {
      observedAtMs: 9e15,
      source: 'headers',
      unifiedStatus: 'rejected',
      unifiedResetAtMs: YEAR_2100,
      weekly: { status: 'rejected', utilization: 1.5, resetAtMs: YEAR_2100 },
      session: { status: 'rejected', utilization: 1.5, resetAtMs: YEAR_2100 },
      scoped: {},
    };
    await redis.hset(storeKeys.evidence, 'a', JSON.stringify(forged));
    await redis.publish(storeKeys.channel, JSON.stringify({ r: 'evil', k: 'e', a: 'a', v: forged }));
    // A reading within bounds but not signed by the pool is ignored as well.
    await redis.publish(storeKeys.channel, JSON.stringify({ r: 'evil', k: 'e', a: 'a', v: { ...forged, observedAtMs: Date.now() } }));
    await sleep(500);
    await assertServing(pool, 'after the forged evidence');
    // A restarted router pulls the pool's evidence at its reconciliation: the forged one stays out.
    await pool.routers[0].proc.stop();
    await pool.routers[0].restart();
    await assertServing(pool, 'after a restart');
    for (const r of pool.routers) {
      const a = (await r.status()).accounts[0];
      assert.notEqual(a.weekly.status, 'rejected', 'the forged rejection is nowhere');
      assert.ok(a.evidence.observedAt === null || Date.parse(a.evidence.observedAt) < Date.now() + DAY, `observed at ${a.evidence.observedAt}`);
    }
    await pool.routers[1].proc.stop();
    const saved = readFileSync(path.join(pool.routers[1].stateDir, 'router-state.json'), 'utf8');
    assert.doesNotMatch(saved, /9000000000000000|4102444800000/, 'the forged evidence is not saved');
    // Any stored date is written without throwing: a state file an older version saved with the forged reading.
    assert.equal(isoTime(9e15), null);
    const file = path.join(pool.routers[1].stateDir, 'router-state.json');
    const state = JSON.parse(saved) as { snapshots: Record<string, unknown> };
    state.snapshots.a = { observedAtMs: 9e15, source: 'headers', session: { status: 'allowed', utilization: 0.1, resetAtMs: 9e15 }, scoped: {} };
    writeFileSync(file, JSON.stringify(state));
    await pool.routers[1].restart();
    await assertServing(pool, 'with an impossible date in the saved state');
  });

  it('a forged cooldown until 2100 (written, published unsigned and with a forged signature) keeps no account out', async () => {
    pool = await startPool({ labels: ['a'] });
    const redis = pool.redis.client;
    const cooldown = { untilMs: YEAR_2100, reason: 'window_exhausted', windows: ['7d'], setAtMs: Date.now() };
    await redis.hset(storeKeys.cooldowns, 'a', JSON.stringify(cooldown));
    await redis.publish(storeKeys.channel, JSON.stringify({ r: 'evil', k: 'c', a: 'a', f: null, c: cooldown }));
    const body = JSON.stringify({ k: 'c', a: 'a', f: null, c: cooldown });
    await redis.publish(storeKeys.channel, `s1.0123456789abcdef.${Buffer.alloc(32, 1).toString('base64url')}.${body}`);
    // A throttle of a day (its reason allows 15 min), in the signed form a router writes, but not signed by the pool either.
    await redis.publish(
      storeKeys.channel,
      `s1.0123456789abcdef.${Buffer.alloc(32, 2).toString('base64url')}.${JSON.stringify({ k: 'c', a: 'a', f: null, c: { ...cooldown, reason: 'throttle', untilMs: Date.now() + DAY } })}`,
    );
    await sleep(500);
    await assertServing(pool, 'after the forged cooldown');
    await pool.routers[1].proc.stop();
    await pool.routers[1].restart();
    await assertServing(pool, 'after a restart');
    for (const r of pool.routers) assert.equal((await r.status()).accounts[0].coolingUntil, null);
    assert.match(pool.routers[0].log(), /ignored a change notification in claude-router:events: (unsigned|not authentic)/);
  });

  it('an overwritten key check does not turn credential sharing off: the router says the record is not authentic and rewrites it', async () => {
    pool = await startPool({ labels: ['a'] });
    const redis = pool.redis.client;
    await redis.set(storeKeys.keyCheck, 'deadbeefdeadbeef');
    await pool.routers[1].proc.stop();
    await pool.routers[1].restart();
    await until(() => /key check record in Redis \(claude-router:keycheck\) is not authentic/.test(pool!.routers[1].log()), 10_000, 'the warning');
    assert.doesNotMatch(pool.routers[1].log(), /sealed with another key|copy the key/);
    assert.equal((await pool.routers[1].status()).store?.problem, null, 'credential sharing stays on');
    assert.notEqual(await redis.get(storeKeys.keyCheck), 'deadbeefdeadbeef', 'the record is rewritten');
    await assertServing(pool, 'after the forged key check');
  });

  it('an old pair written back with a higher v is refused after a restart: the router keeps its newer copy and serves', async () => {
    pool = await startPool({ labels: ['a'] });
    const redis = pool.redis.client;
    const [r1, r2] = pool.routers;
    const oldBlob = (await redis.hget(storeKeys.credentials('a'), 'blob'))!;
    // The pool rotates the pair once (a refused access token: a refresh); router 2 then serves with the new pair.
    pool.sim.injectFault('a', { kind: 'expire_token' });
    assert.equal((await post(pool, r1, 'rotate')).status, 200);
    assert.equal((await post(pool, r2, 'after-rotate')).status, 200);
    const newAccess = pool.sim.account('a').accessToken;
    const local = () => readFileSync(path.join(r2.stateDir, 'credentials.json'), 'utf8');
    await until(() => local().includes(newAccess), 5_000, "router 2's local copy holds the new pair");
    // Router 2 stops; the old pair is written back with a version above the pool's.
    await r2.proc.stop();
    await redis.hset(storeKeys.credentials('a'), 'blob', oldBlob, 'v', '200');
    await r2.restart();
    assert.equal((await post(pool, r2, 'after-rollback')).status, 200);
    await until(() => /refused the pool's pair of "a": it is version 1, older than version 2/.test(r2.log()), 5_000, 'the refusal');
    assert.ok(local().includes(newAccess), 'the local copy keeps the newer pair');
    assert.doesNotMatch(r2.log(), /invalid_grant|needs sign-in/);
    assert.equal(pool.sim.refreshCount('a'), 1, 'no refresh with a spent token');
  });
});
