import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startFakeUpstream } from '../../../src/sim';
import { SharedProxy } from '../../../src/proxy/http/sharedProxy';
import { silentLogger } from '../../../src/proxy/log';
import type { Router } from '../../../src/proxy/createRouter';
import { accounts, callRouter, createSimRouter, eventually, routerStatus, type Harness } from '../../support/routerHarness';
import { freePort } from '../../support/net';

describe('a window that takes over the proxy keeps the pool state', () => {
  it('bindings, cooldowns and quota snapshots survive the takeover, and router-state.json never goes back', async () => {
    const spec = accounts('a', 'b', 'c');
    const sim = await startFakeUpstream({ accounts: spec });
    const dir = mkdtempSync(path.join(os.tmpdir(), 'router-takeover-'));
    const stateFile = path.join(dir, 'router-state.json');
    /** A VS Code window: its router (state loaded from the shared file at activation) behind the shared proxy. */
    const window = async (name: string, port: number): Promise<{ router: Router; proxy: SharedProxy }> => {
      const router = await createSimRouter(sim, spec, { decisionDir: path.join(dir, name), stateFile, saveState: false, routing: { sessionAffinity: true } });
      const proxy = new SharedProxy({ host: '127.0.0.1', port, clientKey: router.engine.clientKey, log: silentLogger });
      proxy.setEngine(router.engine);
      proxy.events.on('role', (role) => router.roleChanged(role));
      return { router, proxy };
    };
    /** Closes a window the way the extension does: save, let the port go, close the router. */
    const closeWindow = async (w: { router: Router; proxy: SharedProxy }) => {
      await w.router.persistence!.flush();
      await w.proxy.dispose();
      await w.router.close();
    };
    const generations: number[] = [];
    const saved = () => JSON.parse(readFileSync(stateFile, 'utf8'));
    const noteGeneration = () => generations.push(existsSync(stateFile) ? saved().generation : 0);

    const port = await freePort();
    const leader = await window('leader', port);
    const follower = await window('follower', port);
    try {
      assert.equal((await leader.proxy.start()).kind, 'leader');
      assert.equal((await follower.proxy.start()).kind, 'follower');
      const h = { router: { url: `http://127.0.0.1:${port}`, clientKey: leader.router.engine.clientKey } } as Harness;

      // The leader binds three sessions, then its account is throttled and a fourth goes elsewhere.
      for (const s of ['s1', 's2', 's3']) assert.equal((await callRouter(h, { session: s })).headers['x-claude-router-account'], 'a');
      sim.injectFault('a', { kind: 'throttle', retryAfterS: 600 });
      const moved = (await callRouter(h, { session: 's4' })).headers['x-claude-router-account'];
      assert.notEqual(moved, 'a');
      noteGeneration();

      await closeWindow(leader);
      noteGeneration();
      await eventually(() => follower.proxy.role.kind === 'leader', 5_000, 'the follower takes over');

      const st = await routerStatus(h);
      assert.equal(st.boundSessions, 4, 'the bindings survived the takeover');
      const a = st.accounts.find((x: { label: string }) => x.label === 'a');
      assert.equal(a.coolingReason, 'throttle', 'the cooldown survived the takeover');
      assert.equal(a.evidence.source, 'headers', 'the quota snapshot survived the takeover');
      const toA = sim.requests.filter((q) => q.account === 'a' && q.path.startsWith('/v1/messages')).length;
      assert.equal((await callRouter(h, { session: 's4' })).headers['x-claude-router-account'], moved, 'a session returns to its account');
      assert.equal((await callRouter(h, { session: 's1' })).headers['x-claude-router-account'], moved, 'the cooling account is not tried');
      assert.equal(sim.requests.filter((q) => q.account === 'a' && q.path.startsWith('/v1/messages')).length, toA);

      await closeWindow(follower);
      noteGeneration();
      const last = saved();
      assert.deepEqual(last.bindings.map((b: { account: string }) => b.account).sort(), ['a', 'a', moved, moved].sort(), 'the file holds every binding');
      assert.equal(last.cooldowns.a?.reason, 'throttle', 'the file holds the cooldown');
      assert.ok(last.snapshots.a && last.snapshots[moved], 'the file holds the quota snapshots');
      assert.ok(
        generations.every((g, i) => i === 0 || g > generations[i - 1]),
        `every save is newer than the one before: ${generations.join(', ')}`,
      );
    } finally {
      await follower.proxy.dispose();
      await leader.proxy.dispose();
      await Promise.all([leader.router.close(), follower.router.close()]);
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
