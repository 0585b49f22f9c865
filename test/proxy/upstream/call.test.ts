/**
 * callUpstream against a real local server: what a compressed answer's caller
 * sees — the read limit on decoded bytes, and a paused reader pausing the
 * decoder and, through it, the upstream read.
 */
import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import * as zlib from 'node:zlib';
import { Agent, type Dispatcher } from 'undici';
import { callUpstream, ClientLink, type StreamingBody } from '../../../src/proxy/upstream/call';

async function withServer(handler: http.RequestListener, run: (origin: string, agent: Agent) => Promise<void>): Promise<void> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const agent = new Agent();
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, agent);
  } finally {
    await agent.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
}

const get = (origin: string): Dispatcher.DispatchOptions => ({ origin, path: '/', method: 'GET' });

describe('callUpstream with a compressed answer', () => {
  it('cuts a gzip bomb at the read limit of decoded bytes instead of inflating it whole', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024)); // 64 MiB of zeros, about 64 KiB on the wire
    const cap = 1024 * 1024;
    await withServer(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(bomb);
      },
      async (origin, agent) => {
        const heads: http.IncomingHttpHeaders[] = [];
        const call = await callUpstream(agent, get(origin), new ClientLink(), (head) => {
          heads.push(head.headers);
          return { buffer: cap };
        });
        assert.equal(call.kind, 'buffered');
        if (call.kind !== 'buffered') return;
        assert.equal(call.truncated, true);
        assert.ok(call.body.length <= cap, `kept ${call.body.length} bytes`);
        assert.equal(heads[0]['content-encoding'], undefined, 'the caller reads the head of the decoded answer');
        assert.equal(heads[0]['content-length'], undefined);
      },
    );
  });

  it('a paused reader holds back the decoder and the upstream read; resumed, it gets every byte, then one end', async () => {
    const plain = randomBytes(8 * 1024 * 1024).toString('hex'); // 16 MiB that compress only to half
    const compressed = zlib.gzipSync(plain);
    let sent = 0;
    await withServer(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
        // Written in slices so the bytes the upstream got out can be counted.
        const slice = 64 * 1024;
        const more = (): void => {
          while (sent < compressed.length) {
            const ok = res.write(compressed.subarray(sent, sent + slice));
            sent = Math.min(compressed.length, sent + slice);
            if (!ok) return void res.once('drain', more);
          }
          res.end();
        };
        more();
      },
      async (origin, agent) => {
        let controller: Dispatcher.DispatchController | undefined;
        let received = 0;
        let ends = 0;
        let pausedAt = -1;
        const body: StreamingBody = {
          onData(chunk) {
            received += chunk.length;
            if (pausedAt < 0) {
              pausedAt = received;
              controller!.pause();
            }
          },
          onEnd() {
            ends++;
            settle(received);
          },
          onError(err) {
            throw err;
          },
        };
        let settle!: (n: number) => void;
        const call = callUpstream<number>(agent, get(origin), new ClientLink(), (_head, c, s) => {
          controller = c;
          settle = s;
          return { stream: body };
        });
        await new Promise((r) => setTimeout(r, 300));
        assert.ok(received - pausedAt <= 64 * 1024, `decoded while paused: ${received - pausedAt} bytes`);
        assert.ok(sent < compressed.length, `the upstream could write all ${compressed.length} bytes while the reader was paused`);
        controller!.resume();
        const result = await call;
        assert.deepEqual(result, { kind: 'streamed', value: plain.length });
        await new Promise((r) => setTimeout(r, 50));
        assert.equal(ends, 1);
      },
    );
  });
});

describe('callUpstream with a buffered answer that trickles', () => {
  it('gives up on a body still arriving past its deadline, a byte at a time (the idle timeout never fires for it)', async () => {
    let timer: NodeJS.Timeout | undefined;
    await withServer(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"type":');
        timer = setInterval(() => res.write(' '), 50);
      },
      async (origin, agent) => {
        const t0 = Date.now();
        const call = await callUpstream(agent, get(origin), new ClientLink(), () => ({ buffer: 1024 * 1024 }), 400);
        clearInterval(timer);
        assert.equal(call.kind, 'buffered');
        if (call.kind !== 'buffered') return;
        assert.match(call.error?.message ?? '', /^the answer body did not end within 0\.4 s of its head$/);
        assert.ok(Date.now() - t0 < 2_000, `ended after ${Date.now() - t0} ms`);
      },
    );
  });
});
