import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SharedProxy, type ProxyRole } from '../../../src/proxy/http/sharedProxy';
import { silentLogger } from '../../../src/proxy/log';
import { accounts, eventually, startHarness } from '../../support/routerHarness';
import { freePort } from '../../support/net';
import { proofFor, startPortHolder } from '../../support/squatter';

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

  for (const followerHearsFirst of [false, true]) {
    it(`a key rotation ends the follower's stream of the old key; it follows again with the new key, never reporting the port blocked (${followerHearsFirst ? 'the follower hears of the key first' : 'the leader rotates first'})`, async () => {
      const h = await startHarness(accounts('a'));
      const port = await freePort();
      const opts = { host: '127.0.0.1', port, clientKey: h.router.clientKey, log: silentLogger, retryMs: 60_000 };
      const first = new SharedProxy(opts);
      const second = new SharedProxy(opts);
      const roles: string[] = [];
      second.events.on('role', (r: ProxyRole) => roles.push(r.kind));
      try {
        first.setEngine(h.router.engine);
        assert.equal((await first.start()).kind, 'leader');
        assert.equal((await second.start()).kind, 'follower');
        const newKey = 'rotated-client-key-0123456789abcdef';
        if (followerHearsFirst) second.setClientKey(newKey);
        h.router.engine.setClientKey(newKey);
        first.setClientKey(newKey);
        if (!followerHearsFirst) setTimeout(() => second.setClientKey(newKey), 300);
        // Following again: a change of the leader's state reaches the follower over a fresh stream.
        let heard = 0;
        second.events.on('remoteChanged', () => heard++);
        await eventually(
          () => {
            h.router.engine.state.changed();
            return heard > 0;
          },
          8_000,
          'the follower hears the leader again',
        );
        const old = await fetch(`http://127.0.0.1:${port}/events`, { headers: { 'x-claude-router-key': opts.clientKey } });
        await old.body?.cancel();
        assert.equal(old.status, 401, 'the old key is refused');
        assert.equal(second.role.kind, 'follower');
        assert.ok(!roles.includes('blocked'), `roles: ${roles.join(', ')}`);
      } finally {
        await second.dispose();
        await first.dispose();
        await h.close();
      }
    });
  }

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

  it('never sends the key to a squatter that answers like the proxy; reports the port taken once, and leads once it is free', async () => {
    const key = 'real-client-key-0123456789abcdef';
    const squatter = await startPortHolder();
    const p = new SharedProxy({ host: '127.0.0.1', port: squatter.port, clientKey: key, log: silentLogger, retryMs: 50 });
    const roles: ProxyRole[] = [];
    p.events.on('role', (r: ProxyRole) => roles.push(r));
    try {
      const role = await p.start();
      assert.equal(role.kind, 'blocked');
      assert.match((role as { reason: string }).reason, new RegExp(`port ${squatter.port} is taken by another program`));
      await eventually(() => squatter.requests.length >= 4, 3000, 'the retry loop asks again');
      assert.equal(roles.length, 1, 'one announcement however often the retry finds the squatter');
      assert.ok(!squatter.allHeaderText().includes(key), 'the key never reached the squatter');
      assert.ok(
        squatter.requests.every((r) => r.url.startsWith('/identity?')),
        'it was only challenged',
      );

      await squatter.close();
      await eventually(() => p.role.kind === 'leader', 3000, 'the window takes the freed port');
    } finally {
      await p.dispose();
      await squatter.close();
    }
  });

  it('stops following a leader that streams endless bytes without ending an event, long before 16 MiB', async () => {
    const key = 'real-client-key-0123456789abcdef';
    let sent = 0;
    let cut = false;
    const leader = await startPortHolder(0, (req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      res.writeHead(200, { 'content-type': url.pathname === '/events' ? 'text/event-stream' : 'application/json' });
      if (url.pathname === '/identity') return res.end(JSON.stringify({ proof: proofFor(key, req.socket, url.searchParams.get('nonce') ?? '') }));
      if (url.pathname !== '/events') return res.end('{"service":"claude-router"}');
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const pump = () => {
        while (!cut && sent < 64 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      res.on('close', () => (cut = true));
      pump();
    });
    const p = new SharedProxy({ host: '127.0.0.1', port: leader.port, clientKey: key, log: silentLogger, retryMs: 60_000 });
    try {
      assert.equal((await p.start()).kind, 'follower');
      await eventually(() => cut, 10_000, 'the follower cuts the stream');
      assert.ok(sent < 8 * 1024 * 1024, `the leader got ${sent} bytes out before the cut`);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(leader.requests.filter((r) => r.url === '/events').length, 1, 'no immediate reconnect');
    } finally {
      await p.dispose();
      await leader.close();
    }
  });
});
