import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { HEADERS_TIMEOUT_MS, listen, MAX_CONNECTIONS, type ProxyServer } from '../../../src/proxy/http/server';
import { startRouter } from '../../../src/cli/runtime';
import { rotateClientKeyFile } from '../../../src/cli/stateDir';
import { silentLogger } from '../../../src/proxy/log';

/** Opens a socket to `port` and resolves once it is connected. */
function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1', () => resolve(sock));
    sock.on('error', reject);
  });
}

/** Resolves with the ms until `sock` is closed by the other side, or `max` when it is still open then. */
function closedWithin(sock: net.Socket, max: number): Promise<number> {
  const started = Date.now();
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(max), max);
    sock.once('close', () => {
      clearTimeout(timer);
      resolve(Date.now() - started);
    });
    sock.resume();
  });
}

describe('the listener bounds unauthenticated connections', function () {
  this.timeout(30_000);
  let server: ProxyServer;
  before(async () => {
    server = await listen(
      (req, res) => {
        let size = 0;
        req.on('data', (d: Buffer) => (size += d.length));
        req.on('end', () => res.end(String(size)));
      },
      '127.0.0.1',
      0,
    );
  });
  after(() => server.close(0));

  it('cuts a connection that sends half a head and waits, within a few seconds, but takes a body that trickles for longer', async () => {
    const half = await connect(server.port);
    half.write('GET /identity?nonce=00 HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    // The slow upload: its head whole at once, its body over more than the head's deadline.
    const parts = 8;
    const chunk = Buffer.alloc(1024, 0x61);
    const upload = request(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-length': String(parts * chunk.length) },
      body: Readable.from(
        (async function* () {
          for (let i = 0; i < parts; i++) {
            yield chunk;
            await new Promise((r) => setTimeout(r, (HEADERS_TIMEOUT_MS + 2_000) / parts));
          }
        })(),
      ),
    });
    const ms = await closedWithin(half, HEADERS_TIMEOUT_MS + 5_000);
    assert.ok(ms < HEADERS_TIMEOUT_MS + 5_000, 'the half-sent head was cut');
    const res = await upload;
    assert.equal(res.statusCode, 200);
    assert.equal(await res.body.text(), String(parts * chunk.length), 'the slow upload arrived whole');
  });

  it(`closes connections past ${MAX_CONNECTIONS} at once, and takes new ones when some go`, async () => {
    const held: net.Socket[] = [];
    try {
      for (let i = 0; i < MAX_CONNECTIONS; i++) held.push(await connect(server.port));
      const extra = await connect(server.port);
      assert.ok((await closedWithin(extra, 2_000)) < 2_000, 'the connection past the cap is closed');
      for (const s of held.splice(0, 10)) s.destroy();
      await new Promise((r) => setTimeout(r, 100));
      const res = await request(`${server.url}/health`);
      assert.equal(res.statusCode, 200);
      await res.body.dump();
    } finally {
      for (const s of held) s.destroy();
    }
  });
});

describe('rotate-key ends the /events streams opened with the old key', function () {
  this.timeout(30_000);
  it('an /events stream opened before the rotation ends; the old key then gets 401', async () => {
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'router-rotate-events-'));
    const router = await startRouter({
      config: {
        listen: { host: '127.0.0.1', port: 0 },
        upstream: { baseUrl: 'http://127.0.0.1:9', tokenUrl: 'http://127.0.0.1:9/token' },
        stateDir,
        accounts: [{ label: 'a', accessToken: 'tok-a' }],
      },
      log: silentLogger,
      pollUsage: false,
      env: {},
    });
    try {
      const oldKey = router.clientKey;
      const events = await request(`${router.url}/events`, { headers: { 'x-claude-router-key': oldKey } });
      assert.equal(events.statusCode, 200);
      const ended = events.body.text().then(
        () => 'ended',
        () => 'ended',
      );
      rotateClientKeyFile(stateDir);
      const outcome = await Promise.race([ended, new Promise((r) => setTimeout(() => r('still open'), 5_000))]);
      assert.equal(outcome, 'ended');
      const refused = await request(`${router.url}/events`, { headers: { 'x-claude-router-key': oldKey } });
      assert.equal(refused.statusCode, 401);
      await refused.body.dump();
    } finally {
      await router.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
