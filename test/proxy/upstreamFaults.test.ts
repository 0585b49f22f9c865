/**
 * Upstream behaviour the fake upstream does not script: a raw HTTP server
 * stands in for Anthropic so each test controls the bytes exactly.
 */
import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { startRouter, type RunningRouter } from '../../src/cli/runtime';
import { silentLogger } from '../../src/proxy/log';
import { callRouter, messagesBody, routerStatus, type Harness } from '../support/routerHarness';

type Handler = (account: string, req: http.IncomingMessage, res: http.ServerResponse) => void;

async function withUpstream(handler: Handler, run: (h: Harness, hits: string[]) => Promise<void>): Promise<void> {
  const hits: string[] = [];
  const upstream = http.createServer((req, res) => {
    const account = String(req.headers.authorization ?? '').replace('Bearer tok-', '');
    hits.push(account);
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
        accounts: ['a', 'b'].map((l) => ({ label: l, accessToken: `tok-${l}` })),
      },
      log: silentLogger,
      pollUsage: false,
      env: {},
    });
    await run({ router, sim: undefined as never, stateDir, close: async () => undefined, decisions: () => [] }, hits);
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
});
