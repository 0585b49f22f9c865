/**
 * Credentials shared through Redis (docs/shared-pool.md), with two BUILT router processes on one
 * real redis-server and the fake upstream, whose refresh tokens rotate on every grant (the old
 * pair stops working at once, as Anthropic's do).
 */
import { strict as assert } from 'node:assert';
import { open } from '../../src/store/encryption';
import { storeKeys } from '../../src/store/keys';
import { closePool, post, startPool, type Pool } from '../support/sharedPool';

describe('shared pool: credentials (two routers, one redis-server)', function () {
  this.timeout(60_000);
  let pool: Pool | undefined;
  afterEach(async function () {
    await closePool(pool, this.currentTest);
    pool = undefined;
  });

  it('concurrent refreshes of one account from both routers make exactly one refresh, and both serve with the new pair', async () => {
    // A refresh takes 300 ms, as a real one may: the two routers' refreshes overlap.
    pool = await startPool({ labels: ['a'], sim: { tokenLatencyMs: 300 } });
    const [r1, r2] = pool.routers;
    const before = pool.sim.account('a').accessToken;
    // The access token every router holds is refused from now on: each of them must refresh.
    pool.sim.injectFault('a', { kind: 'expire_token' });
    const answers = await Promise.all([...[1, 2, 3, 4].map((i) => post(pool!, r1, `r1-session-${i}`)), ...[1, 2, 3, 4].map((i) => post(pool!, r2, `r2-session-${i}`))]);
    for (const a of answers) assert.equal(a.status, 200, a.text);
    // One call to the token endpoint for the whole pool: no router sent the spent refresh token (an invalid_grant it would hide).
    const tokenCalls = () => pool!.sim.requests.filter((r) => r.path.startsWith('/v1/oauth/token'));
    assert.deepEqual(
      tokenCalls().map((r) => r.status),
      [200],
    );
    assert.equal(pool.sim.refreshCount('a'), 1);
    assert.notEqual(pool.sim.account('a').accessToken, before);
    // Both keep serving with the rotated pair: no further refresh, no refusal.
    for (const r of [r1, r2, r1, r2]) assert.equal((await post(pool, r, 'after-refresh')).status, 200);
    assert.equal(tokenCalls().length, 1);
    for (const r of [r1, r2]) assert.doesNotMatch(r.log(), /invalid_grant|refresh failed/);
  });

  it('keeps tokens in Redis sealed: nothing readable without the key, the pair opens with it', async () => {
    pool = await startPool({ labels: ['a', 'b'] });
    pool.sim.injectFault('a', { kind: 'expire_token' });
    assert.equal((await post(pool, pool.routers[0], 'seal-session')).status, 200);
    assert.equal(pool.sim.refreshCount('a'), 1);
    const current = pool.sim.account('a');
    const redis = pool.redis.client;
    let everything = '';
    for (const key of await redis.keys('*')) {
      const type = await redis.type(key);
      const value =
        type === 'hash' ? JSON.stringify(await redis.hgetall(key)) : type === 'string' ? await redis.get(key) : type === 'set' ? (await redis.smembers(key)).join(',') : '';
      everything += `${key}=${value}\n`;
    }
    assert.match(everything, /claude-router:cred:a=/, 'the pool holds the pair of a');
    for (const secret of [current.accessToken, current.refreshToken!, ...pool.accounts.flatMap((a) => [a.accessToken, a.refreshToken!])]) {
      assert.ok(!everything.includes(secret), 'a token is readable in Redis');
    }
    assert.doesNotMatch(everything, /sk-ant-/);
    const blob = (await redis.hget(storeKeys.credentials('a'), 'blob'))!;
    const opened = JSON.parse(open(Buffer.from(pool.keyText, 'hex'), blob, storeKeys.credentials('a'))) as { accessToken: string; refreshToken: string };
    assert.equal(opened.accessToken, current.accessToken);
    assert.equal(opened.refreshToken, current.refreshToken);
    assert.throws(() => open(Buffer.alloc(32, 7), blob, storeKeys.credentials('a')), /another key/);
    // Moved to another account's key, it does not open either.
    assert.throws(() => open(Buffer.from(pool!.keyText, 'hex'), blob, storeKeys.credentials('b')), /another key/);
  });
});
