/**
 * The proxy's peak memory under large bodies that it must parse whole: N concurrent bodies of
 * M MB *without* a session header (so each is parsed to find its model and session, unlike
 * Claude Code's), against an upstream that answers after a delay. The parse counts against
 * `routing.max-buffered-body-bytes` (docs/security.md#memory-budget-for-request-bodies), so the
 * proxy's peak resident memory stays within the budget plus a margin; this prints that figure.
 *
 *   npm run build && node bench/build.mjs && node out/bench/bodyMemory.js \
 *     [--requests 24] [--body-mb 31] [--budget-mb 256] [--upstream-ms 5000] [--margin-mb 150]
 *
 * Prints the answers by status, the proxy's peak RSS (Linux `VmHWM` of `node dist/cli.js start`)
 * and whether it is within the budget plus the margin; exit status 1 when it is not, or when a
 * request got anything but 200 or the budget's 503. Linux only.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { argValue, procStatusKb } from './common';
import { proxyConfigYaml } from '../test/support/routerCli';

const MB = 1024 * 1024;
const argv = process.argv.slice(2);
const REQUESTS = Number(argValue(argv, 'requests', '24'));
const BODY_BYTES = Number(argValue(argv, 'body-mb', '31')) * MB;
const BUDGET_BYTES = Number(argValue(argv, 'budget-mb', '256')) * MB;
const UPSTREAM_MS = Number(argValue(argv, 'upstream-ms', '5000'));
const MARGIN_BYTES = Number(argValue(argv, 'margin-mb', '150')) * MB;
const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
const ANSWER = JSON.stringify({
  id: 'msg_bench',
  type: 'message',
  role: 'assistant',
  model: 'm',
  content: [],
  stop_reason: 'end_turn',
  usage: { input_tokens: 1, output_tokens: 1 },
});

/** An upstream that reads and drops each body, then answers 200 after `delayMs`. */
async function startSlowUpstream(delayMs: number): Promise<{ url: string; close(): void }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER), delayMs));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** A Messages body of `bytes` bytes, valid JSON, with no session in it. */
function sessionlessBody(bytes: number): Buffer {
  const head = '{"model":"claude-sonnet-4-5-20250929","max_tokens":8,"messages":[{"role":"user","content":"';
  const tail = '"}]}';
  const body = Buffer.alloc(bytes, 0x78);
  body.write(head);
  body.write(tail, bytes - tail.length);
  return body;
}

/** Starts the built CLI's proxy with `configFile`; resolves its pid and URL once it listens. */
function startProxy(configFile: string): Promise<{ pid: number; url: string; stop(): void }> {
  const proc = spawn(process.execPath, [CLI, 'start', '--config', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    proc.stdout.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      const m = /^listening on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(out);
      if (m && proc.pid !== undefined) resolve({ pid: proc.pid, url: m[1], stop: () => proc.kill('SIGTERM') });
    });
    proc.stderr.resume();
    proc.once('exit', (code) => reject(new Error(`the proxy exited (${code}) before listening:\n${out}`)));
  });
}

async function main(): Promise<number> {
  if (process.platform !== 'linux') throw new Error('bodyMemory reads /proc: Linux only');
  const upstream = await startSlowUpstream(UPSTREAM_MS);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'claude-router-bodymem-'));
  const clientKey = 'bench-body-memory-key-0123456789';
  const configFile = path.join(tmp, 'proxy-config.yaml');
  fs.writeFileSync(
    configFile,
    proxyConfigYaml({
      port: 0,
      baseUrl: upstream.url,
      tokenUrl: `${upstream.url}/token`,
      stateDir: path.join(tmp, 'state'),
      clientKey,
      accounts: [{ label: 'a', accessToken: 'sk-ant-oat01-bench-body-memory' }],
      extra: `routing:\n  max-buffered-body-bytes: ${BUDGET_BYTES}`,
    }),
  );
  const proxy = await startProxy(configFile);
  try {
    const idle = procStatusKb(proxy.pid, 'VmRSS') * 1024;
    const body = sessionlessBody(BODY_BYTES);
    const post = async (): Promise<number> => {
      const res = await request(`${proxy.url}/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${clientKey}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body,
      });
      await res.body.dump();
      return res.statusCode;
    };
    const statuses = await Promise.all(Array.from({ length: REQUESTS }, post));
    const peak = procStatusKb(proxy.pid, 'VmHWM') * 1024;
    const byStatus = new Map<number, number>();
    for (const s of statuses) byStatus.set(s, (byStatus.get(s) ?? 0) + 1);
    const target = BUDGET_BYTES + MARGIN_BYTES;
    const within = peak <= target;
    const mb = (n: number) => `${Math.round(n / MB)} MB`;
    process.stdout.write(
      [
        `${REQUESTS} concurrent ${mb(BODY_BYTES)} bodies without a session header, upstream answering after ${UPSTREAM_MS} ms, budget ${mb(BUDGET_BYTES)}`,
        `answers: ${[...byStatus].map(([s, n]) => `${n} × ${s}`).join(', ')}`,
        `proxy RSS idle ${mb(idle)}, peak ${mb(peak)} (target ≤ budget + ${mb(MARGIN_BYTES)} = ${mb(target)}): ${within ? 'within' : 'OVER'}`,
        '',
      ].join('\n'),
    );
    const unexpected = statuses.some((s) => s !== 200 && s !== 503);
    return within && !unexpected ? 0 : 1;
  } finally {
    proxy.stop();
    upstream.close();
    setTimeout(() => fs.rmSync(tmp, { recursive: true, force: true }), 500).unref();
  }
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exitCode = 1;
  },
);
