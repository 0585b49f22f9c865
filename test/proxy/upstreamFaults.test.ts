/**
 * Upstream behaviour the fake upstream does not script: a raw HTTP server
 * stands in for Anthropic so each test controls the bytes exactly.
 */
import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import * as net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { startRouter, type RunningRouter } from '../../src/cli/runtime';
import { silentLogger } from '../../src/proxy/log';
import type { DecisionRecord } from '../../src/routing/decision';
import { callRouter, messagesBody, routerStatus, type Harness } from '../support/routerHarness';

type Handler = (account: string, req: http.IncomingMessage, res: http.ServerResponse) => void;

async function withUpstream(
  handler: Handler,
  run: (h: Harness, hits: string[], seen: http.IncomingHttpHeaders[]) => Promise<void>,
  opts: {
    token?: (res: http.ServerResponse) => void;
    accounts?: Array<{ label: string; accessToken: string; refreshToken?: string; expiresAt?: number }>;
    /** Answer as soon as the head arrives, without reading the body (`handler` may leave it unread). */
    early?: boolean;
  } = {},
): Promise<void> {
  const hits: string[] = [];
  const seen: http.IncomingHttpHeaders[] = [];
  const upstream = http.createServer((req, res) => {
    if (req.url === '/token') {
      req.resume();
      return req.on('end', () => (opts.token ? opts.token(res) : res.writeHead(500).end()));
    }
    const account = String(req.headers.authorization ?? '').replace('Bearer tok-', '');
    hits.push(account);
    seen.push(req.headers);
    if (opts.early) return handler(account, req, res);
    req.resume();
    req.on('end', () => handler(account, req, res));
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'router-upstream-'));
  let router: RunningRouter | undefined;
  try {
    router = await startRouter({
      config: {
        listen: { host: '127.0.0.1', port: 0 },
        upstream: { baseUrl: url, tokenUrl: `${url}/token` },
        stateDir,
        clientKey: 'upstream-faults-key-0123',
        accounts: opts.accounts ?? ['a', 'b'].map((l) => ({ label: l, accessToken: `tok-${l}` })),
      },
      log: silentLogger,
      pollUsage: false,
      env: {},
    });
    await run({ router, sim: undefined as never, stateDir, close: async () => undefined, decisions: () => [] }, hits, seen);
  } finally {
    await router?.close();
    upstream.closeAllConnections();
    await new Promise<void>((r) => upstream.close(() => r()));
    rmSync(stateDir, { recursive: true, force: true });
  }
}

const SSE = { 'content-type': 'text/event-stream' };
const start = 'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"x","usage":{"input_tokens":1,"output_tokens":1}}}\n\n';

describe('upstream faults beyond the fake upstream', () => {
  it('never glues half an event to its own error when the stream is cut mid-event', async () => {
    await withUpstream(
      (_a, _req, res) => {
        res.writeHead(200, SSE);
        res.write(start);
        res.write('event: content_block_delta\ndata: {"type":"content_bl');
        setTimeout(() => res.destroy(), 20);
      },
      async (h) => {
        const r = await callRouter(h, { session: 's', body: messagesBody({ stream: true }) });
        assert.equal(r.status, 200);
        assert.deepEqual(r.events, ['message_start', 'error']);
        assert.ok(!r.text.includes('content_bl'), 'the partial event is not delivered');
        for (const block of r.text.split('\n\n').filter(Boolean)) {
          const data = block.split('\n').find((l) => l.startsWith('data: '))!;
          assert.doesNotThrow(() => JSON.parse(data.slice(6)), 'every delivered event is whole');
        }
      },
    );
  });

  it('relays a 500 from every account as a 500, not as a rate limit', async () => {
    await withUpstream(
      (_a, _req, res) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"type":"error","error":{"type":"api_error","message":"Internal server error"}}');
      },
      async (h, hits) => {
        const r = await callRouter(h, { session: 's' });
        assert.equal(r.status, 500);
        assert.equal(JSON.parse(r.text).error.message, 'Internal server error');
        assert.equal(hits.length, 2, 'tried the other account once');
      },
    );
  });

  it('answers 502 in Anthropic form when upstream drops every connection', async () => {
    await withUpstream(
      (_a, req) => req.socket.destroy(),
      async (h) => {
        const r = await callRouter(h, { session: 's', body: messagesBody({ stream: true }) });
        assert.equal(r.status, 502);
        assert.equal(JSON.parse(r.text).error.type, 'api_error');
        assert.equal((await routerStatus(h)).inflight, 0);
      },
    );
  });

  it('holds no more than 16 MiB of an event that never ends: before content it moves on, after content it ends the stream', async () => {
    const endless = (res: http.ServerResponse, first: string) => {
      res.writeHead(200, SSE);
      res.write(first);
      const line = Buffer.alloc(1 << 20, 'x');
      let sent = 0;
      const more = () => {
        while (sent < 20 && !res.destroyed && res.write(line)) sent++;
        if (sent < 20 && !res.destroyed) res.once('drain', more);
      };
      res.write('event: content_block_delta\ndata: ');
      more();
    };
    await withUpstream(
      (account, _req, res) => {
        if (account === 'a') return endless(res, '');
        res.writeHead(200, SSE);
        res.end(`${start}event: message_stop\ndata: {"type":"message_stop"}\n\n`);
      },
      async (h) => {
        const r = await callRouter(h, { body: messagesBody({ stream: true }) });
        assert.equal(r.status, 200);
        assert.equal(r.headers['x-claude-router-account'], 'b');
        assert.deepEqual(r.events, ['message_start', 'message_stop']);
      },
    );
    await withUpstream(
      (_a, _req, res) => endless(res, start),
      async (h) => {
        const r = await callRouter(h, { body: messagesBody({ stream: true }) });
        assert.equal(r.status, 200);
        assert.deepEqual(r.events, ['message_start', 'error']);
        assert.ok(r.text.length < 4096, `the unfinished event was not relayed (${r.text.length} bytes)`);
        assert.equal((await routerStatus(h)).inflight, 0);
      },
    );
  });

  it('tries a connection dropped before any answer once more on the same account, keeping the session where it is', async () => {
    let dropped = 0;
    await withUpstream(
      (account, req, res) => {
        // The keep-alive race: the upstream closes a connection just as the next request is sent on it.
        if (account === 'a' && dropped++ === 0) return req.socket.destroy();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"type":"message","content":[],"usage":{"input_tokens":1,"output_tokens":1}}');
      },
      async (h, hits) => {
        const r = await callRouter(h, { session: 's' });
        assert.equal(r.status, 200);
        assert.equal(r.headers['x-claude-router-account'], 'a');
        assert.deepEqual(hits, ['a', 'a']);
        const st = await routerStatus(h);
        assert.equal(st.counters.failovers, 0);
        const [d] = JSON.parse((await callRouter(h, { method: 'GET', path: '/decisions?limit=1' })).text) as DecisionRecord[];
        assert.deepEqual(d.attempts.map((x) => `${x.account}:${x.result}`), ['a:network_error', 'a:success']);
      },
    );
  });

  it('moves on after the second dropped connection of one account', async () => {
    await withUpstream(
      (account, req, res) => {
        if (account === 'a') return req.socket.destroy();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"type":"message","content":[],"usage":{"input_tokens":1,"output_tokens":1}}');
      },
      async (h, hits) => {
        const r = await callRouter(h, { session: 's' });
        assert.equal(r.status, 200);
        assert.equal(r.headers['x-claude-router-account'], 'b');
        assert.deepEqual(hits, ['a', 'a', 'b']);
      },
    );
  });

  for (const [what, answer] of [
    ['a token-counting 429', (res: http.ServerResponse) => res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '60' }).end('{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit for token counting"}}')],
    ['a 403 page', (res: http.ServerResponse) => res.writeHead(403, { 'content-type': 'text/html' }).end('<html><body>Access denied</body></html>')],
    ['a 401', (res: http.ServerResponse) => res.writeHead(401, { 'content-type': 'application/json' }).end('{"type":"error","error":{"type":"authentication_error","message":"OAuth authentication is currently not supported."}}')],
  ] as const) {
    it(`leaves every account usable for messages after ${what} to count_tokens, trying two accounts at most`, async () => {
      let tokenCalls = 0;
      await withUpstream(
        (_a, req, res) => {
          if (req.url?.startsWith('/v1/messages/count_tokens')) return answer(res);
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"type":"message","content":[],"usage":{"input_tokens":1,"output_tokens":1}}');
        },
        async (h, hits) => {
          const counted = await callRouter(h, { path: '/v1/messages/count_tokens?beta=true' });
          assert.equal(counted.status, Number(what.match(/\d{3}/)![0]), 'the upstream answer is relayed');
          assert.equal(hits.length, 2, 'two accounts tried, not the whole pool');
          const st = await routerStatus(h);
          for (const a of st.accounts) {
            assert.equal(a.usable, true, `${a.label} stays usable`);
            assert.equal(a.needsSignIn, false);
          }
          assert.equal(tokenCalls, 0, 'no token refresh for a count_tokens 401');
          const served = await callRouter(h, { session: 's' });
          assert.equal(served.status, 200);
          assert.equal(hits.length, 3, 'messages went upstream at once');
        },
        {
          accounts: ['a', 'b', 'c'].map((l) => ({ label: l, accessToken: `tok-${l}`, refreshToken: `rt-${l}`, expiresAt: Date.now() + 3_600_000 })),
          token: (res) => {
            tokenCalls++;
            res.writeHead(500).end();
          },
        },
      );
    });
  }

  it('reads an answer sent before the body was read: a 429 still cools the account, a 413 reaches the client', async () => {
    // Claude Code bodies run to megabytes; an upstream may refuse one from its head and close.
    const big = messagesBody({ stream: true, text: 'x'.repeat(4 * 1024 * 1024) });
    const refuse = (res: http.ServerResponse, status: number, type: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', connection: 'close', ...headers });
      res.end(JSON.stringify({ type: 'error', error: { type, message: `refused early (${status})` } }));
      res.on('finish', () => res.socket?.destroy());
    };
    await withUpstream(
      (account, req, res) => {
        if (account === 'a') return refuse(res, 429, 'rate_limit_error', { 'retry-after': '120' });
        req.resume();
        req.on('end', () => {
          res.writeHead(200, SSE);
          res.end(`${start}event: message_stop\ndata: {"type":"message_stop"}\n\n`);
        });
      },
      async (h, hits) => {
        const r = await callRouter(h, { session: 's', body: big });
        assert.equal(r.status, 200);
        assert.equal(r.headers['x-claude-router-account'], 'b');
        assert.deepEqual(hits, ['a', 'b']);
        const a = (await routerStatus(h)).accounts.find((x: { label: string }) => x.label === 'a');
        assert.equal(a.coolingReason, 'throttle', 'the early 429 was read as a throttle, not as a dropped connection');
      },
      { early: true },
    );
    await withUpstream(
      (_account, _req, res) => refuse(res, 413, 'request_too_large'),
      async (h, hits) => {
        const r = await callRouter(h, { session: 's', body: big });
        assert.equal(r.status, 413);
        assert.equal(JSON.parse(r.text).error.type, 'request_too_large');
        assert.deepEqual(hits, ['a'], 'a deterministic refusal is not tried elsewhere');
      },
      { early: true },
    );
  });

  it('treats a 200 whose JSON does not parse as a failure and tries the next account', async () => {
    await withUpstream(
      (account, _req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(account === 'a' ? '<html>oops' : '{"type":"message","content":[],"usage":{"input_tokens":1,"output_tokens":2}}');
      },
      async (h, hits) => {
        const r = await callRouter(h, { session: 's' });
        assert.equal(r.status, 200);
        assert.equal(r.headers['x-claude-router-account'], 'b');
        assert.deepEqual(hits, ['a', 'b']);
      },
    );
  });

  it('forwards events split into tiny chunks whole and in order', async () => {
    await withUpstream(
      (_a, _req, res) => {
        res.writeHead(200, SSE);
        const text = start + 'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}\r\n\r\nevent: message_stop\ndata: {"type":"message_stop"}\n\n';
        let i = 0;
        const tick = () => {
          if (i >= text.length) return void res.end();
          res.write(text.slice(i, i + 7));
          i += 7;
          setImmediate(tick);
        };
        tick();
      },
      async (h) => {
        const r = await callRouter(h, { session: 's', body: messagesBody({ stream: true }) });
        assert.deepEqual(r.events, ['message_start', 'message_delta', 'message_stop']);
      },
    );
  });

  it('a token endpoint outage cools the account briefly and never asks for a new sign-in', async () => {
    const accounts = [
      { label: 'a', accessToken: 'tok-a', refreshToken: 'ref-a-0123456789' },
      { label: 'b', accessToken: 'tok-b' },
    ];
    await withUpstream(
      (account, _req, res) => {
        if (account === 'a') {
          res.writeHead(401, { 'content-type': 'application/json' });
          return void res.end('{"type":"error","error":{"type":"authentication_error","message":"OAuth token has expired."}}');
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"type":"message","content":[],"usage":{"input_tokens":1,"output_tokens":1}}');
      },
      async (h) => {
        const r = await callRouter(h, { session: 's' });
        assert.equal(r.status, 200);
        assert.equal(r.headers['x-claude-router-account'], 'b');
        const a = (await routerStatus(h)).accounts.find((x: any) => x.label === 'a');
        assert.equal(a.needsSignIn, false, 'a 503 from the token endpoint is not a dead account');
        assert.equal(a.coolingReason, 'server_error');
      },
      { accounts, token: (res) => res.writeHead(503, { 'content-type': 'text/html' }).end('<html>maintenance</html>') },
    );
  });

  it('serves with a still-valid token while a slow refresh runs in the background', async () => {
    const accounts = [{ label: 'a', accessToken: 'tok-a', refreshToken: 'ref-a-0123456789', expiresAt: Date.now() + 120_000 }];
    await withUpstream(
      (_a, _req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"type":"message","content":[],"usage":{"input_tokens":1,"output_tokens":1}}');
      },
      async (h) => {
        const t0 = Date.now();
        const r = await callRouter(h, { session: 's' });
        assert.equal(r.status, 200);
        assert.ok(Date.now() - t0 < 2_000, `answered in ${Date.now() - t0} ms, not after the token endpoint`);
      },
      { accounts, token: () => undefined /* never answers */ },
    );
  });

  it('forwards only the first of two session headers and nothing about the client machine', async () => {
    await withUpstream(
      (_a, _req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"type":"message","content":[],"usage":{"input_tokens":1,"output_tokens":1}}');
      },
      async (h, _hits, seen) => {
        await callRouter(h, { headers: { 'x-claude-code-session-id': 'first', referer: 'http://x/', 'x-forwarded-for': '10.0.0.1', forwarded: 'for=1.2.3.4' } });
        assert.equal(seen[0].referer, undefined);
        assert.equal(seen[0]['x-forwarded-for'], undefined);
        assert.equal(seen[0].forwarded, undefined);
      },
    );
  });

  it('answers a request Node cannot parse with an Anthropic-shaped 400', async () => {
    await withUpstream(
      (_a, _req, res) => res.end(),
      async (h) => {
        const { port } = new URL(h.router.url);
        const text = await new Promise<string>((resolve, reject) => {
          const sock = net.connect(Number(port), '127.0.0.1', () => sock.end('POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab'));
          let out = '';
          sock.on('data', (d) => (out += d));
          sock.on('end', () => resolve(out));
          sock.on('error', reject);
        });
        assert.match(text, /^HTTP\/1\.1 400/);
        assert.equal(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).error.type, 'invalid_request_error');
      },
    );
  });
});
