/**
 * The load generator: its own process (forked by bench/run.ts, driven over IPC), an undici Pool
 * with one connection per concurrent request, closed loop (each of `concurrency` slots sends its
 * next request as soon as the previous one completed). Per request it records the time to the
 * first body byte, the time to completion and the number of body chunks (one per HTTP chunk of a
 * chunked response: llhttp reports each chunk's data separately), and checks the answer
 * (200, and for SSE a final `message_stop`).
 *
 * Messages in: {cmd:'setup', url, path, headers: one header object per slot, body (base64), sse}
 *              {cmd:'run', durationMs, maxRequests, minRequests?, capMs?, record} → {type:'done', ...}
 *              {cmd:'teardown'} → {type:'closed'};  {cmd:'exit'}
 */
import { performance } from 'node:perf_hooks';
import { Pool, type Dispatcher } from 'undici';

interface Setup {
  cmd: 'setup';
  url: string;
  path: string;
  headers: Record<string, string>[];
  body: string;
  sse: boolean;
}
interface Run {
  cmd: 'run';
  durationMs: number;
  maxRequests: number;
  /** Keep going past durationMs until this many requests were sent (never past capMs). */
  minRequests?: number;
  capMs?: number;
  record: boolean;
}
type Msg = Setup | Run | { cmd: 'teardown' } | { cmd: 'exit' };

export interface RunResult {
  type: 'done';
  requests: number;
  errors: number;
  errorSamples: string[];
  wallMs: number;
  ttfbMs: number[];
  totalMs: number[];
  chunks: number[];
  bytes: number;
}

interface One {
  ok: boolean;
  why?: string;
  ttfb: number;
  total: number;
  chunks: number;
  bytes: number;
}

let pool: Pool | undefined;
let setup: Setup | undefined;
let body: Buffer = Buffer.alloc(0);

function once(p: Pool, opts: Dispatcher.DispatchOptions, sse: boolean): Promise<One> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    let ttfb = 0;
    let chunks = 0;
    let bytes = 0;
    let status = 0;
    let tail = '';
    p.dispatch(opts, {
      onConnect() {},
      onHeaders(statusCode: number) {
        status = statusCode;
        return true;
      },
      onData(chunk: Buffer) {
        if (chunks === 0) ttfb = performance.now() - t0;
        chunks++;
        bytes += chunk.length;
        if (sse) tail = (tail + chunk.toString('latin1')).slice(-120);
        return true;
      },
      onComplete() {
        const total = performance.now() - t0;
        const ok = status === 200 && (!sse || tail.includes('event: message_stop'));
        resolve({ ok, why: ok ? undefined : `status ${status}${sse ? ', no message_stop' : ''}`, ttfb, total, chunks, bytes });
      },
      onError(err: Error) {
        resolve({ ok: false, why: err.message, ttfb: 0, total: performance.now() - t0, chunks, bytes });
      },
    });
  });
}

async function run(m: Run): Promise<RunResult> {
  if (!pool || !setup) throw new Error('run before setup');
  const s = setup;
  const p = pool;
  const res: RunResult = { type: 'done', requests: 0, errors: 0, errorSamples: [], wallMs: 0, ttfbMs: [], totalMs: [], chunks: [], bytes: 0 };
  const started = performance.now();
  const deadline = started + m.durationMs;
  const cap = started + Math.max(m.durationMs, m.capMs ?? 0);
  const minRequests = m.minRequests ?? 0;
  let issued = 0;
  const more = () => {
    const now = performance.now();
    return issued < m.maxRequests && (now < deadline || (issued < minRequests && now < cap));
  };
  const slot = async (i: number): Promise<void> => {
    const opts: Dispatcher.DispatchOptions = { path: s.path, method: 'POST', headers: s.headers[i], body };
    while (more()) {
      issued++;
      const r = await once(p, opts, s.sse);
      res.requests++;
      res.bytes += r.bytes;
      if (!r.ok) {
        res.errors++;
        if (res.errorSamples.length < 5) res.errorSamples.push(r.why ?? 'error');
        continue;
      }
      if (m.record) {
        res.ttfbMs.push(r.ttfb);
        res.totalMs.push(r.total);
        res.chunks.push(r.chunks);
      }
    }
  };
  await Promise.all(s.headers.map((_, i) => slot(i)));
  res.wallMs = performance.now() - started;
  return res;
}

process.on('message', (m: Msg) => {
  void (async () => {
    try {
      if (m.cmd === 'setup') {
        setup = m;
        body = Buffer.from(m.body, 'base64');
        pool = new Pool(m.url, { connections: m.headers.length, pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: 60_000, bodyTimeout: 60_000 });
        process.send!({ type: 'ready' });
      } else if (m.cmd === 'run') {
        process.send!(await run(m));
      } else if (m.cmd === 'teardown') {
        await pool?.close();
        pool = undefined;
        process.send!({ type: 'closed' });
      } else if (m.cmd === 'exit') {
        process.exit(0);
      }
    } catch (err) {
      process.send!({ type: 'error', message: (err as Error).stack ?? String(err) });
    }
  })();
});
process.on('disconnect', () => process.exit(0));
