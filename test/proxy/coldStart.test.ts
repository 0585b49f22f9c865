/**
 * A cold start does not put every session on one account (issue 14, fault 7): every account's
 * usage is read right after start, and until its quota is known an account may take one request
 * at a time when the first choice is busy, so sessions opening together spread over the pool.
 * Real sockets against the fake upstream.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startRouter, type RunningRouter } from '../../src/cli/runtime';
import { silentLogger } from '../../src/proxy/log';
import { startFakeUpstream, type FakeUpstream } from '../../src/sim';
import { accounts, callRouter, eventually, messagesBody, routerStatus, startHarness, type Harness } from '../support/routerHarness';

describe('a cold start spreads the pool', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('at start with three accounts and no evidence, sessions opening at once spread over more than one account', async () => {
    h = await startHarness(accounts('a', 'b', 'c'), { routing: { sessionAffinity: true }, sim: { sseIntervalMs: 40, sseDeltaCount: 5 } });
    const opened = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => callRouter(h!, { session: `opening-${i}`, body: messagesBody({ stream: true }) })));
    assert.ok(opened.every((r) => r.status === 200));
    const served = opened.map((r) => r.headers['x-claude-router-account']);
    assert.deepEqual([...new Set(served)].sort(), ['a', 'b', 'c'], `served by ${served.join(', ')}`);
    const st = await routerStatus(h);
    assert.ok(
      st.accounts.every((a: any) => a.evidence.freshness === 'fresh'),
      'each account answered with its quota',
    );
    // Once every quota is known, a lone new session goes by the ranking again (all equal here: the first account).
    assert.equal((await callRouter(h, { session: 'later' })).headers['x-claude-router-account'], 'a');
    await h.router.close();
    const probes = h.decisions().filter((d) => d.probe?.kind === 'evidence');
    const perAccount = new Map<string, number>();
    for (const d of probes) perAccount.set(d.probe!.account, (perAccount.get(d.probe!.account) ?? 0) + 1);
    assert.deepEqual([...perAccount.values()], [1, 1, 1], 'one request per account while its quota was unknown');
  });

  it('every account’s usage is read right after start', async () => {
    const spec = [
      { ...accounts('a')[0], initialSevenDayUsed: 0.2 },
      { ...accounts('b')[0], initialSevenDayUsed: 0.4 },
      { ...accounts('c')[0], initialSevenDayUsed: 0.6 },
    ];
    const sim: FakeUpstream = await startFakeUpstream({ accounts: spec });
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'router-cold-'));
    let router: RunningRouter | undefined;
    try {
      router = await startRouter({
        config: {
          listen: { host: '127.0.0.1', port: 0 },
          upstream: { baseUrl: sim.url, tokenUrl: sim.tokenUrl },
          stateDir,
          clientKey: 'cold-start-key-0123456789',
          accounts: spec.map((a) => ({ label: a.label, accessToken: a.accessToken, refreshToken: a.refreshToken })),
        },
        log: silentLogger,
      });
      const h2 = { router } as Harness;
      const st = await eventually(
        async () => (await routerStatus(h2)).accounts.every((a: any) => a.evidence.source === 'usage'),
        5_000,
        'every account read through the usage endpoint',
      ).then(() => routerStatus(h2));
      assert.deepEqual(
        st.accounts.map((a: any) => Math.round(a.weekly.used * 100)),
        [20, 40, 60],
      );
    } finally {
      await router?.close();
      await sim.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
