import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { startFakeUpstream, type FakeUpstream } from '../../src/sim';
import { accounts, callRouter, createSimRouter, readDecisions, type Harness } from '../support/routerHarness';

/** True when a new listener can take the port. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

describe('createRouter: one assembly with one ordered close', () => {
  let sim: FakeUpstream;
  let dir: string;
  beforeEach(async () => {
    sim = await startFakeUpstream({ accounts: accounts('a', 'b') });
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-assembly-'));
  });
  afterEach(async () => {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('close releases the port, writes the last decision and saves the last state change', async () => {
    const stateFile = path.join(dir, 'router-state.json');
    const router = await createSimRouter(sim, accounts('a', 'b'), { decisionDir: dir, stateFile, listen: { host: '127.0.0.1', port: 0 }, routing: { sessionAffinity: true } });
    const port = router.server!.port;
    const h = { router: { url: router.server!.url, clientKey: router.engine.clientKey } } as Harness;
    assert.equal(await portIsFree(port), false, 'the router listens');
    const first = await callRouter(h, { session: 'first' });
    const last = await callRouter(h, { session: 'last' });
    assert.equal(last.status, 200);
    // Closed at once: well inside the decision log's batch interval and the state's debounce.
    await router.close();

    assert.equal(await portIsFree(port), true, 'the port is released');
    const decisions = readDecisions(dir);
    assert.equal(decisions.at(-1)?.requestId, last.headers['x-claude-router-request-id'], 'the last decision is on disk');
    const saved = JSON.parse(readFileSync(stateFile, 'utf8'));
    assert.deepEqual(
      saved.bindings.map((b: { account: string }) => b.account).sort(),
      [first.headers['x-claude-router-account'], last.headers['x-claude-router-account']].sort(),
      'both sessions are bound in router-state.json',
    );
    await router.close(); // a second close is harmless
  });

  it('a port that is taken fails the start with EADDRINUSE', async () => {
    const holder = net.createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      await assert.rejects(createSimRouter(sim, accounts('a'), { decisionDir: dir, listen: { host: '127.0.0.1', port } }), /EADDRINUSE/);
    } finally {
      await new Promise<void>((r) => holder.close(() => r()));
    }
  });
});
