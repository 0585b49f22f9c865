/**
 * The store is never a single point of failure (docs/shared-pool.md): Redis stopped mid-run, two
 * BUILT router processes keep serving from their own copies, say so once and in `status`, refresh
 * only the tokens they rotated themselves, and reconcile when Redis comes back (empty: it
 * persisted nothing).
 */
import { strict as assert } from 'node:assert';
import { runCli } from '../support/routerCli';
import { closePool, post, startPool, until, type Pool, type PoolRouter } from '../support/sharedPool';

async function account(r: PoolRouter, label: string) {
  const a = (await r.status()).accounts.find((x) => x.label === label);
  assert.ok(a, `no account ${label}`);
  return a;
}

describe('shared pool: Redis stopped mid-run', function () {
  this.timeout(90_000);
  let pool: Pool | undefined;
  afterEach(async function () {
    await closePool(pool, this.currentTest);
    pool = undefined;
  });

  it('both routers keep serving, nothing is lost, and they reconcile when it restarts', async () => {
    const routing = ['  session-affinity: true', '  prefer-primary: true', '  primary-account: a'];
    pool = await startPool({ labels: ['a', 'b'], routing: [routing, routing] });
    const p = pool;
    const [r1, r2] = p.routers;
    const tokenCalls = () => p.sim.requests.filter((r) => r.path.startsWith('/v1/oauth/token'));
    let sent = 0;
    const statuses: number[] = [];
    let stopTraffic = false;
    /** While set, the lanes wait before their next request (so a scripted fault meets the request the test sends). */
    let paused: Promise<void> | undefined;
    /** While set, router 2's lanes wait: a request of its own to a, answered after router 1's cooldown began, would be fresher evidence that lifts it (rightly). */
    let router2Paused: Promise<void> | undefined;
    let resumeRouter2 = () => {};
    let busy = 0;
    // Steady traffic through both routers (router 2's paused from the fault until it took the cooldown): every request must be answered 200.
    const traffic = [r1, r2, r1, r2].map(async (r, lane) => {
      for (let i = 0; !stopTraffic; i++) {
        await paused;
        if (r === r2) await router2Paused;
        busy++;
        sent++;
        statuses.push((await post(p, r, `lane-${lane}-${i % 5}`)).status);
        busy--;
        await new Promise((res) => setTimeout(res, 20));
      }
    });
    const pause = async (): Promise<() => void> => {
      let resume!: () => void;
      paused = new Promise((res) => (resume = res));
      await until(() => busy === 0, 5_000, 'the lanes to pause');
      return () => {
        paused = undefined;
        resume();
      };
    };
    try {
      await until(() => sent > 20, 5_000, 'traffic to start');
      await p.redis.stop();
      for (const r of [r1, r2]) await until(async () => (await r.status()).store?.state === 'unreachable', 5_000, 'the routers to see the store gone');

      // While it is away: router 1 cools a down (only it knows) and binds a new session to b.
      const resume = await pause();
      router2Paused = new Promise((res) => (resumeRouter2 = res));
      p.sim.injectFault('a', { kind: 'throttle', retryAfterS: 60 });
      assert.equal((await post(p, r1, 'outage-session')).status, 200);
      resume();
      const cooling = (await account(r1, 'a')).coolingUntil;
      assert.ok(cooling, 'router 1 cools a down');
      assert.equal((await account(r2, 'a')).coolingUntil, null, 'router 2 cannot know yet');
      const outageBinding = (await r1.status()).sessions.find((s) => s.account === 'b');
      assert.ok(outageBinding, 'router 1 bound a session to b');

      // b's pair is refused from now on. Router 1 stored every pair last (it seeded them), so it alone may
      // refresh while the store is away: its traffic, now on b, makes it do so.
      p.sim.injectFault('b', { kind: 'expire_token' });
      await until(() => tokenCalls().length === 1, 5_000, 'router 1 to refresh b');

      const cli = await runCli(['status', '--config', r2.configFile]);
      assert.equal(cli.code, 0, cli.stderr);
      assert.match(cli.stdout, /store: redis:\/\/127\.0\.0\.1:\d+\/0 unreachable since \S+ \([^)]+\); serving from this machine's copy/);
      for (const r of [r1, r2]) assert.equal(r.log().match(/state store \S+: unreachable/g)?.length, 1, 'the outage is logged once');

      await p.redis.start();
      for (const r of [r1, r2]) await until(async () => (await r.status()).store?.state === 'connected', 5_000, 'the routers to reconnect');
      // Router 1's cooldown and binding from the outage reach router 2.
      let seen: unknown;
      await until(
        async () => (seen = (await account(r2, 'a')).coolingUntil) === cooling,
        10_000,
        () => `router 2 to take router 1's cooldown of a until ${cooling} (it has ${String(seen)})`,
      );
      await until(
        async () => (await r2.status()).sessions.some((s) => s.sessionId === outageBinding.sessionId && s.account === 'b'),
        10_000,
        "router 2 to take router 1's binding",
      );
      resumeRouter2();
      // Router 2 now sends its traffic to b, with the pair router 1 rotated during the outage (from the pool).
      const servedB = p.sim.account('b').served;
      await until(() => p.sim.account('b').served > servedB + 10, 5_000, 'both routers to serve on b');
    } finally {
      stopTraffic = true;
      resumeRouter2();
      await Promise.all(traffic);
    }
    assert.ok(statuses.length > 40, `${statuses.length} requests`);
    assert.deepEqual(
      statuses.filter((s) => s !== 200),
      [],
      'every request was answered',
    );
    assert.deepEqual(
      tokenCalls().map((c) => c.status),
      [200],
      'one refresh, by the router that owned the pair; nobody sent a spent refresh token',
    );
    assert.equal((await post(p, r2, 'new-after-outage')).status, 200);
    assert.equal(tokenCalls().length, 1);
    for (const r of [r1, r2]) assert.doesNotMatch(r.log(), /invalid_grant/);
  });
});
