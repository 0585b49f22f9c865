import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import * as net from 'node:net';
import { fetchFromRouter, verifyHolder } from '../../../src/proxy/http/identity';
import { startHarness, accounts, type Harness } from '../../support/routerHarness';
import { proofFor, startPortHolder } from '../../support/squatter';
import { freePort } from '../../support/net';

const nonce = () => randomBytes(32).toString('hex');

describe('proof of identity on the router port', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness(accounts('a'));
  });
  after(() => h.close());

  it('GET /identity answers a nonce with the HMAC of it under the key, bound to both ends of the connection, without the key and with nothing else', async () => {
    const n = nonce();
    const { body, socket } = await new Promise<{ body: string; socket: net.Socket }>((resolve, reject) => {
      const req = http.get(`${h.router.url}/identity?nonce=${n}`, { agent: false }, (res) => {
        assert.equal(res.statusCode, 200);
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ body: text, socket: req.socket! }));
      });
      req.on('error', reject);
    });
    const parsed = JSON.parse(body) as Record<string, unknown>;
    assert.deepEqual(Object.keys(parsed), ['proof']);
    // The router's ends are the client's socket seen from the other side.
    const seenByRouter = { localAddress: socket.remoteAddress, localPort: socket.remotePort, remotePort: socket.localPort } as net.Socket;
    assert.equal(parsed.proof, proofFor(h.router.clientKey, seenByRouter, n));
    const otherClientPort = { ...seenByRouter, remotePort: (socket.localPort ?? 0) + 1 } as net.Socket;
    assert.notEqual(parsed.proof, proofFor(h.router.clientKey, otherClientPort, n), 'another client port gives another proof');
  });

  it('refuses nonces that are not 64 hex digits, extra parameters, bodies and browser pages', async () => {
    for (const q of ['', 'nonce=', `nonce=${nonce().slice(2)}`, `nonce=${nonce()}00`, `nonce=${nonce().toUpperCase()}`, `nonce=${nonce()}&x=1`, `nonce=${'g'.repeat(64)}`]) {
      const res = await fetch(`${h.router.url}/identity?${q}`);
      assert.equal(res.status, 400, q);
      assert.doesNotMatch(await res.text(), /proof/);
    }
    const withBody = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${h.router.url}/identity?nonce=${nonce()}`, { method: 'GET', headers: { 'content-length': 2048 } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end('x'.repeat(2048));
    });
    assert.equal(withBody, 400);
    const page = await fetch(`${h.router.url}/identity?nonce=${nonce()}`, { headers: { origin: 'https://example.com' } });
    assert.equal(page.status, 403);
  });

  it('the router proves itself; the key then travels only on that connection', async () => {
    const holder = await verifyHolder(h.router.url, h.router.clientKey);
    assert.equal(holder.kind, 'ours');
    if (holder.kind === 'ours') await holder.client.close();
    const [status] = await fetchFromRouter(h.router.url, h.router.clientKey, ['/status']);
    assert.equal(status.statusCode, 200);
    assert.equal(JSON.parse(status.text).service, 'claude-router');
  });

  it('a router asked with another key says so: the caller holds the wrong key, it is not a squatter', async () => {
    const holder = await verifyHolder(h.router.url, 'clr-a-key-of-another-state-directory');
    assert.equal(holder.kind, 'foreign');
    if (holder.kind === 'foreign') assert.match(holder.why, /answers as a router, but for another client key/);
    await assert.rejects(fetchFromRouter(h.router.url, 'clr-a-key-of-another-state-directory', ['/status']), /another client key than this one/);
  });

  it('a squatter that answers like the router is foreign and never receives the key', async () => {
    const squatter = await startPortHolder();
    try {
      const holder = await verifyHolder(squatter.url, h.router.clientKey);
      assert.equal(holder.kind, 'foreign');
      await assert.rejects(fetchFromRouter(squatter.url, h.router.clientKey, ['/status']), /could not prove it is Claude Router/);
      assert.ok(squatter.requests.length >= 2, 'it was asked');
      assert.ok(!squatter.allHeaderText().includes(h.router.clientKey), 'the key never reached it');
      assert.ok(squatter.requests.every((r) => r.url.startsWith('/identity?nonce=')));
    } finally {
      await squatter.close();
    }
  });

  it('a squatter that relays the challenge to the real router on another port is foreign', async () => {
    const relay = await startPortHolder(0, (req, res) => {
      void fetch(`${h.router.url}${req.url}`).then(async (r) => {
        res.writeHead(r.status, { 'content-type': 'application/json' });
        res.end(await r.text());
      });
    });
    try {
      const holder = await verifyHolder(relay.url, h.router.clientKey);
      assert.equal(holder.kind, 'foreign');
      assert.ok(!relay.allHeaderText().includes(h.router.clientKey));
    } finally {
      await relay.close();
    }
  });

  for (const [family, address] of [
    ['another loopback address', '127.0.0.2'],
    ['IPv6 loopback', '::1'],
  ] as const) {
    it(`a plain TCP relay on ${family} with the router's port to the real router gets no key`, async function () {
      // The relay of the finding: bytes both ways, on the same port number, to the real router.
      const seen: Buffer[] = [];
      const sockets: net.Socket[] = [];
      const relay = net.createServer((inbound) => {
        const outbound = net.connect(h.router.port, '127.0.0.1');
        sockets.push(inbound, outbound);
        inbound.on('data', (d: Buffer) => seen.push(d));
        inbound.pipe(outbound).pipe(inbound);
        inbound.on('error', () => outbound.destroy());
        outbound.on('error', () => inbound.destroy());
      });
      const listening = await new Promise<boolean>((resolve) => {
        relay.once('error', () => resolve(false));
        relay.listen(h.router.port, address, () => resolve(true));
      });
      if (!listening) this.skip(); // no such loopback address on this machine
      try {
        const url = `http://${address.includes(':') ? `[${address}]` : address}:${h.router.port}`;
        const holder = await verifyHolder(url, h.router.clientKey);
        assert.equal(holder.kind, 'foreign');
        if (holder.kind === 'foreign') assert.match(holder.why, /relaying this port/);
        await assert.rejects(fetchFromRouter(url, h.router.clientKey, ['/status']), /could not prove it is Claude Router/);
        assert.ok(seen.length > 0, 'the challenge went through the relay');
        assert.ok(!Buffer.concat(seen).toString('latin1').includes(h.router.clientKey), 'the key never went through it');
      } finally {
        for (const sock of sockets) sock.destroy();
        await new Promise<void>((resolve) => relay.close(() => resolve()));
      }
    });
  }

  it('a holder that answers with endless bytes is foreign within the deadline; a closed port is free', async () => {
    const flood = await startPortHolder(0, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => res.write('x'.repeat(4096)), 5);
      res.on('close', () => clearInterval(timer));
    });
    try {
      const started = Date.now();
      assert.equal((await verifyHolder(flood.url, h.router.clientKey, { timeoutMs: 1_000 })).kind, 'foreign');
      assert.ok(Date.now() - started < 1_500);
    } finally {
      await flood.close();
    }
    assert.equal((await verifyHolder(`http://127.0.0.1:${await freePort()}`, h.router.clientKey)).kind, 'free');
  });
});
