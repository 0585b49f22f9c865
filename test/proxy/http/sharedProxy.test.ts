import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SharedProxy, type ProxyRole } from '../../../src/proxy/http/sharedProxy';
import { silentLogger } from '../../../src/proxy/log';
import { accounts, eventually, startHarness } from '../../support/routerHarness';
import { freePort } from '../../support/net';

describe('one proxy shared by several windows', () => {
  it('the first window leads, the second follows after an identity check, and takes over when the first goes away', async () => {
    const h = await startHarness(accounts('a'));
    const port = await freePort();
    const opts = { host: '127.0.0.1', port, clientKey: h.router.clientKey, log: silentLogger };
    const first = new SharedProxy(opts);
    const second = new SharedProxy(opts);
    try {
      first.setEngine(h.router.engine);
      second.setEngine(h.router.engine);
      assert.equal((await first.start()).kind, 'leader');
      assert.equal((await second.start()).kind, 'follower');
      let remoteChanges = 0;
      second.events.on('remoteChanged', () => remoteChanges++);
      h.router.engine.state.changed();
      await eventually(() => remoteChanges > 0, 3000, 'the follower hears of a change');

      await first.dispose();
      await eventually(() => second.role.kind === 'leader', 5000, 'takeover');
      const res = await fetch(`http://127.0.0.1:${port}/health`);
      assert.equal(res.status, 200);
    } finally {
      await second.dispose();
      await first.dispose();
      await h.close();
    }
  });

  it('does not mistake another program on the port for the proxy', async () => {
    const other = http.createServer((_req, res) => res.end('hello'));
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', () => r()));
    const port = (other.address() as AddressInfo).port;
    const p = new SharedProxy({ host: '127.0.0.1', port, clientKey: 'k'.repeat(20), log: silentLogger, retryMs: 60_000 });
    try {
      const role: ProxyRole = await p.start();
      assert.equal(role.kind, 'blocked');
      assert.match((role as { reason: string }).reason, /another program/);
    } finally {
      await p.dispose();
      await new Promise<void>((r) => other.close(() => r()));
    }
  });
});
