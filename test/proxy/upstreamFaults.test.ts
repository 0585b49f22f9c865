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
import * as zlib from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { startRouter, type RunningRouter } from '../../src/cli/runtime';
import { silentLogger } from '../../src/proxy/log';
import type { DecisionRecord } from '../../src/routing/decision';
import { callRouter, eventually, messagesBody, readDecisions, routerStatus, type Harness } from '../support/routerHarness';

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
    await run({ router, sim: undefined as never, stateDir, close: async () => undefined, decisions: () => readDecisions(stateDir) }, hits, seen);
  } finally {
    await router?.close();
    upstream.closeAllConnections();
    await new Promise<void>((r) => upstream.close(() => r()));
    rmSync(stateDir, { recursive: true, force: true });
  }
}

const SSE = { 'content-type': 'text/event-stream' };
const start =
  'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"x","usage":{"input_tokens":1,"output_tokens":1}}}\n\n';

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
        assert.deepEqual(
          d.attempts.map((x) => `${x.account}:${x.result}`),
          ['a:network_error', 'a:success'],
        );
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
    [
      'a token-counting 429',
      (res: http.ServerResponse) =>
        res
          .writeHead(429, { 'content-type': 'application/json', 'retry-after': '60' })
          .end('{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit for token counting"}}'),
    ],
    ['a 403 page', (res: http.ServerResponse) => res.writeHead(403, { 'content-type': 'text/html' }).end('<html><body>Access denied</body></html>')],
    [
      'a 401',
      (res: http.ServerResponse) =>
        res
          .writeHead(401, { 'content-type': 'application/json' })
          .end('{"type":"error","error":{"type":"authentication_error","message":"OAuth authentication is currently not supported."}}'),
    ],
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
        const text =
          start +
          'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}\r\n\r\nevent: message_stop\ndata: {"type":"message_stop"}\n\n';
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
          sock.on('data', (d: Buffer) => (out += d.toString()));
          sock.on('end', () => resolve(out));
          sock.on('error', reject);
        });
        assert.match(text, /^HTTP\/1\.1 400/);
        assert.equal(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).error.type, 'invalid_request_error');
      },
    );
  });
});

/** Compressors by coding, as an upstream that ignored `accept-encoding: identity` would use them. */
const COMPRESS: Record<string, { whole: (b: Buffer | string) => Buffer; stream: () => zlib.Gzip | zlib.Deflate | zlib.BrotliCompress }> = {
  gzip: { whole: (b) => zlib.gzipSync(b), stream: () => zlib.createGzip() },
  'x-gzip': { whole: (b) => zlib.gzipSync(b), stream: () => zlib.createGzip() },
  deflate: { whole: (b) => zlib.deflateSync(b), stream: () => zlib.createDeflate() },
  br: { whole: (b) => zlib.brotliCompressSync(b), stream: () => zlib.createBrotliCompress() },
};

/** An answer in four groups of whole events, as upstream flushes them. */
const GROUPS = [
  start,
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}\n\n',
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
  'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n',
];
const MESSAGE = '{"type":"message","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":7,"output_tokens":5}}';

/** Sends `groups` compressed in `coding`, each flushed on its own and 30 ms after the last; then ends the answer. */
async function sendCompressed(res: http.ServerResponse, coding: string, groups: readonly string[]): Promise<void> {
  const z = COMPRESS[coding].stream();
  z.pipe(res);
  for (const g of groups) {
    z.write(g);
    await new Promise<void>((r) => z.flush(() => r()));
    await new Promise((r) => setTimeout(r, 30));
  }
  z.end();
}

/** A streamed call read with node:http, so each chunk the router wrote is seen as its own `data` event (they are 30 ms apart). */
function streamChunks(
  h: Harness,
  opts: { signal?: AbortSignal; onChunk?: (chunk: string) => void } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; chunks: string[] }> {
  const body = messagesBody({ stream: true });
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${h.router.url}/v1/messages?beta=true`,
      {
        method: 'POST',
        signal: opts.signal,
        headers: {
          'content-type': 'application/json',
          'anthropic-version': '2023-06-01',
          'accept-encoding': 'gzip, br',
          authorization: `Bearer ${h.router.clientKey}`,
          'x-claude-code-session-id': 's',
        },
      },
      (res) => {
        const chunks: string[] = [];
        res.on('data', (c: Buffer) => {
          chunks.push(c.toString('utf8'));
          opts.onChunk?.(c.toString('utf8'));
        });
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, chunks }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function lastDecision(h: Harness) {
  await eventually(() => h.decisions().length > 0, 3000, 'the decision record');
  return h.decisions().at(-1)!;
}

/** Account a answers with `answerA`, b with a good gzip message: the client gets b's message, and the decision records `result` for a's attempt. */
async function movesOnFromA(answerA: (res: http.ServerResponse) => void, result: string): Promise<void> {
  await withUpstream(
    (account, _req, res) => {
      if (account === 'a') return answerA(res);
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(zlib.gzipSync(MESSAGE));
    },
    async (h, hits) => {
      const r = await callRouter(h, { session: 's' });
      assert.equal(r.status, 200);
      assert.equal(r.text, MESSAGE);
      assert.deepEqual(hits, ['a', 'b']);
      assert.deepEqual(
        (await lastDecision(h)).attempts.map((a) => a.result),
        [result, 'success'],
      );
    },
  );
}

describe('compressed answers (upstream ignored accept-encoding: identity)', () => {
  for (const coding of Object.keys(COMPRESS)) {
    it(`relays a ${coding} event stream decoded, whole events in one client chunk per upstream group, and records its usage`, async () => {
      await withUpstream(
        (_a, _req, res) => {
          res.writeHead(200, { ...SSE, 'content-encoding': coding });
          void sendCompressed(res, coding, GROUPS);
        },
        async (h, hits) => {
          const r = await streamChunks(h);
          assert.equal(r.status, 200);
          assert.equal(r.headers['content-encoding'], undefined, 'the client gets identity bytes');
          assert.deepEqual(r.chunks, GROUPS);
          assert.deepEqual(hits, ['a'], 'one account served it');
          const d = await lastDecision(h);
          assert.equal(d.outcome, 'success');
          assert.deepEqual(d.usage, { inputTokens: 1, outputTokens: 9, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 });
        },
      );
    });
  }

  for (const [coding, whole] of [...Object.entries(COMPRESS).map(([c, z]) => [c, z.whole] as const), ['deflate', (b: string) => zlib.deflateRawSync(b)] as const]) {
    it(`relays a ${coding} JSON answer decoded${coding === 'deflate' && whole !== COMPRESS.deflate.whole ? ' (raw deflate, no zlib wrapper)' : ''} and records its usage`, async () => {
      await withUpstream(
        (_a, _req, res) => {
          res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding });
          res.end(whole(MESSAGE));
        },
        async (h, hits) => {
          const r = await callRouter(h, { session: 's', headers: { 'accept-encoding': 'gzip, br' } });
          assert.equal(r.status, 200);
          assert.equal(r.text, MESSAGE);
          assert.equal(r.headers['content-encoding'], undefined);
          assert.equal(r.headers['content-length'], String(MESSAGE.length));
          assert.deepEqual(hits, ['a']);
          const d = await lastDecision(h);
          assert.deepEqual(d.usage, { inputTokens: 7, outputTokens: 5, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 });
        },
      );
    });
  }

  it('relays a gzip 429 decoded, with a consistent head, when every account refused', async () => {
    const error = '{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}';
    await withUpstream(
      (_a, _req, res) => {
        // No rate-limit headers: a request-scoped 429, relayed as it came once the other account said the same.
        res.writeHead(429, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(zlib.gzipSync(error));
      },
      async (h, hits) => {
        const r = await callRouter(h, { session: 's' });
        assert.equal(r.status, 429);
        assert.deepEqual(hits, ['a', 'b']);
        assert.equal(r.text, error);
        assert.equal(r.headers['content-encoding'], undefined);
        assert.equal(r.headers['content-length'], String(error.length));
      },
    );
  });

  it('treats a 200 whose JSON body is not JSON (a page, a message cut short) as a broken answer of that account and moves on', async () => {
    for (const body of ['<html><body>{"usage":{"output_tokens":1}}</body></html>', MESSAGE.slice(0, -1)])
      await movesOnFromA((res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body), 'invalid_json');
  });

  it('treats a corrupt gzip body as a broken answer of that account and moves on (JSON and stream)', async () => {
    const corrupt = Buffer.concat([zlib.gzipSync(MESSAGE).subarray(0, 10), Buffer.from('this is not deflate data at all')]);
    await movesOnFromA((res) => res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(corrupt), 'body_failed');
    await withUpstream(
      (account, _req, res) => {
        res.writeHead(200, { ...SSE, 'content-encoding': 'gzip' });
        if (account === 'a') return void res.end(corrupt);
        void sendCompressed(res, 'gzip', GROUPS);
      },
      async (h, hits) => {
        const r = await streamChunks(h);
        assert.equal(r.status, 200);
        assert.deepEqual(r.chunks, GROUPS);
        assert.deepEqual(hits, ['a', 'b']);
        assert.deepEqual(
          (await lastDecision(h)).attempts.map((a) => a.result),
          ['stream_failed', 'success'],
        );
      },
    );
  });

  it('reads an error event before content in a gzip stream: cools that account and moves on with nothing sent', async () => {
    const overloaded = 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    await withUpstream(
      (account, _req, res) => {
        res.writeHead(200, { ...SSE, 'content-encoding': 'gzip' });
        void sendCompressed(res, 'gzip', account === 'a' ? [': keep-alive\n\n', overloaded] : GROUPS);
      },
      async (h, hits) => {
        const r = await streamChunks(h);
        assert.equal(r.status, 200);
        assert.deepEqual(r.chunks, GROUPS);
        assert.deepEqual(hits, ['a', 'b']);
        assert.deepEqual(
          (await lastDecision(h)).attempts.map((a) => a.result),
          ['stream_overloaded', 'success'],
        );
      },
    );
  });

  it('ends a gzip stream that breaks after content with one error event after the last whole event', async () => {
    await withUpstream(
      (_a, _req, res) => {
        res.writeHead(200, { ...SSE, 'content-encoding': 'gzip' });
        const z = zlib.createGzip();
        z.pipe(res);
        z.write(GROUPS[0]);
        z.flush(() => setTimeout(() => res.end(Buffer.from('garbage in the middle of the deflate stream')), 30));
      },
      async (h, hits) => {
        const r = await callRouter(h, { session: 's', body: messagesBody({ stream: true }) });
        assert.equal(r.status, 200);
        assert.deepEqual(r.events, ['message_start', 'error']);
        assert.deepEqual(hits, ['a'], 'no failover after the first byte');
      },
    );
  });

  it('does not read an answer in a coding it cannot decode (zstd), and moves on', async () => {
    await movesOnFromA(
      (res) => res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'zstd' }).end(Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3])),
      'body_failed',
    );
  });

  it('cuts a gzip bomb at the answer size limit and moves on', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(40 * 1024 * 1024, 0x20)); // 40 MiB of spaces, over the 32 MiB limit
    await movesOnFromA((res) => res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(bomb), 'body_too_large');
  });

  it('a client leaving mid gzip stream aborts the upstream call and frees the account', async () => {
    let upstreamClosed = false;
    await withUpstream(
      (_a, req, res) => {
        res.writeHead(200, { ...SSE, 'content-encoding': 'gzip' });
        const z = zlib.createGzip();
        z.pipe(res);
        z.write(GROUPS[0]);
        z.flush();
        res.on('close', () => {
          upstreamClosed = true;
          z.destroy();
        });
        req.resume();
      },
      async (h) => {
        const ac = new AbortController();
        await streamChunks(h, { signal: ac.signal, onChunk: () => ac.abort() }).catch(() => undefined);
        await eventually(() => upstreamClosed, 3000, 'the upstream connection to close');
        await eventually(async () => (await routerStatus(h)).inflight === 0, 3000, 'no request in flight');
        assert.equal((await lastDecision(h)).outcome, 'client_abort');
      },
    );
  });
});
