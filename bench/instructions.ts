/**
 * Instructions per request, counted by callgrind: a figure that does not move with the
 * machine's other load (it counts instructions, not seconds), for judging a hot-path change
 * when the c=32 CPU ratio's noise (±0.15 between runs) hides it. Informative: the verdicts
 * stay the alternated CPU ratios of run.ts (docs/performance.md says how the two relate).
 *
 *   node out/bench/instructions.js [--proxy NAME=PATH/cli.js]… [--requests 2000] [--warmup 3000]
 *                                  [--concurrency 32] [--kind json|sse] [--cache-sim] [--keep DIR]
 *
 * For each target — the bare pass-through and every `--proxy` (default: this checkout's
 * dist/cli.js) — it starts a fresh fake upstream and the target under
 * `valgrind --tool=callgrind --instr-atstart=no` with V8 in one thread (`--single-threaded`, so
 * no background compiler or GC thread adds counts that depend on timing), warms it up with
 * `--warmup` requests, switches counting on (`callgrind_control -i on`), sends `--requests`
 * requests at `--concurrency`, dumps and stops it. Prints Ir (instructions executed) per
 * request and each proxy's ratio to the bare pass-through. Needs valgrind (callgrind_control).
 * About a minute per target at the defaults.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { argValue, BENCH_MODEL, claudeCodeBody, claudeCodeHeaders } from './common';
import { proxyConfigYaml } from '../test/support/routerCli';

const ROOT = path.resolve(__dirname, '..', '..');
const argv = process.argv.slice(2);
const REQUESTS = Number(argValue(argv, 'requests', '2000'));
const WARMUP = Number(argValue(argv, 'warmup', '3000'));
const C = Number(argValue(argv, 'concurrency', '32'));
const SSE = argValue(argv, 'kind', 'json') === 'sse';
const PATH = '/v1/messages?beta=true';
const STRACE = argValue(argv, 'tool', 'callgrind') === 'strace';
/** Where each target's callgrind dump is kept (`DIR/NAME.callgrind.out`, for callgrind_annotate); not kept without it. */
const KEEP = argValue(argv, 'keep', '');
/** Also simulate the caches (`--cache-sim=yes`): instruction and data cache misses per request (slower, about 2×). */
const CACHE_SIM = argv.includes('--cache-sim');

interface Started {
  proc: ChildProcess;
  out: string;
}

function start(cmd: string, args: string[]): Started {
  const proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const s: Started = { proc, out: '' };
  const add = (d: Buffer) => (s.out = (s.out + d.toString()).slice(-65_536));
  proc.stdout.on('data', add);
  proc.stderr.on('data', add);
  return s;
}

async function waitFor(s: Started, re: RegExp, ms = 120_000): Promise<RegExpMatchArray> {
  const until = Date.now() + ms;
  for (;;) {
    const m = s.out.match(re);
    if (m) return m;
    if (s.proc.exitCode !== null || Date.now() > until) throw new Error(`no ${re} in:\n${s.out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function stop(s: Started): Promise<void> {
  if (s.proc.exitCode !== null) return;
  const exited = new Promise((r) => s.proc.once('exit', r));
  s.proc.kill('SIGINT');
  const t = setTimeout(() => s.proc.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(t);
}

/** Sends `n` requests over `C` connections, closed loop; throws on any non-200. */
async function load(url: string, credential: Record<string, string>, body: Buffer, n: number): Promise<void> {
  const pool = new Pool(url, { connections: C, pipelining: 1, headersTimeout: 300_000, bodyTimeout: 300_000 });
  let issued = 0;
  const slot = async (i: number) => {
    const headers = {
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'claude-code-20250219,oauth-2025-04-20',
      ...claudeCodeHeaders(`b3f0c7a2-5d1e-4c8b-9a6f-${i.toString(16).padStart(12, '0')}`),
      ...credential,
    };
    while (issued < n) {
      issued++;
      const res = await pool.request({ path: PATH, method: 'POST', headers, body });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}: ${text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: C }, (_, i) => slot(i)));
  await pool.close();
}

/** Each event's total over a callgrind dump's files (their `events:` line names the `summary:`/`totals:` figures: Ir, and the cache events with --cache-sim). */
function totals(dir: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const f of fs.readdirSync(dir)) {
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    const names = text
      .match(/^events: (.+)$/m)?.[1]
      .trim()
      .split(/\s+/) ?? ['Ir'];
    const figures =
      text
        .match(/^(?:summary|totals): (.+)$/m)?.[1]
        .trim()
        .split(/\s+/)
        .map(Number) ?? [];
    names.forEach((n, i) => sums.set(n, (sums.get(n) ?? 0) + (figures[i] ?? 0)));
  }
  return sums;
}

/** The sum of `events` per request, rounded. */
function perRequest(sums: Map<string, number>, ...events: string[]): string {
  return Math.round(events.reduce((s, e) => s + (sums.get(e) ?? 0), 0) / REQUESTS).toLocaleString('en-US');
}

/** Calls per syscall name from `strace -c`'s table. */
function straceCalls(table: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const line of table.split('\n')) {
    const m = line.trim().match(/^[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?([a-z_0-9]+)$/);
    if (m && m[2] !== 'total') calls.set(m[2], Number(m[1]));
  }
  return calls;
}

async function measure(name: string, targetArgs: (up: UpstreamInfo, tmp: string) => string[], ready: RegExp): Promise<number> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'claude-router-ir-'));
  const sim = start(process.execPath, [path.join(ROOT, 'dist', 'sim.js'), '--accounts', '3', '--five-hour-limit', '1e15', '--seven-day-limit', '1e15', '--max-records', '1000']);
  await waitFor(sim, /^sim listening on /m);
  const up = JSON.parse((await waitFor(sim, /^\{.*\}$/m))[0]) as UpstreamInfo;
  const cgDir = path.join(tmp, 'cg');
  fs.mkdirSync(cgDir);
  const node = [process.execPath, '--single-threaded', ...targetArgs(up, tmp)];
  const target = STRACE
    ? start(node[0], node.slice(1))
    : start('valgrind', [
        '--tool=callgrind',
        '--instr-atstart=no',
        ...(CACHE_SIM ? ['--cache-sim=yes'] : []),
        `--callgrind-out-file=${path.join(cgDir, 'callgrind.out')}`,
        ...node,
      ]);
  try {
    const url = (await waitFor(target, ready))[1];
    const body = claudeCodeBody(0, { stream: SSE, sessionId: 'b3f0c7a2-5d1e-4c8b-9a6f-000000000000' });
    const credential = { 'x-claude-router-key': CLIENT_KEY };
    await load(url, credential, body, WARMUP);
    if (STRACE) {
      // Attached after the warm-up: -f with -p takes every thread of the process.
      const file = path.join(cgDir, 'strace.txt');
      const tracer = start('strace', ['-f', '-c', '-o', file, '-p', String(target.proc.pid)]);
      await new Promise((r) => setTimeout(r, 1_000));
      await load(url, credential, body, REQUESTS);
      await stop(tracer);
      const calls = straceCalls(fs.readFileSync(file, 'utf8'));
      const total = [...calls.values()].reduce((a, b) => a + b, 0);
      const top = [...calls].sort((a, b) => b[1] - a[1]).slice(0, 8);
      process.stdout.write(
        `${name.padEnd(24)} ${(total / REQUESTS).toFixed(2).padStart(12)} syscalls/request: ${top.map(([k, v]) => `${k} ${(v / REQUESTS).toFixed(2)}`).join(', ')}\n`,
      );
      return total / REQUESTS;
    }
    execFileSync('callgrind_control', ['-i', 'on', String(target.proc.pid)], { stdio: 'ignore' });
    await load(url, credential, body, REQUESTS);
    execFileSync('callgrind_control', ['-d', String(target.proc.pid)], { stdio: 'ignore' });
    await stop(target);
    const events = totals(cgDir);
    const ir = (events.get('Ir') ?? 0) / REQUESTS;
    const misses = CACHE_SIM
      ? `  I1 misses ${perRequest(events, 'I1mr')}, D1 misses ${perRequest(events, 'D1mr', 'D1mw')}, LL misses ${perRequest(events, 'ILmr', 'DLmr', 'DLmw')} per request`
      : '';
    process.stdout.write(`${name.padEnd(24)} ${Math.round(ir).toLocaleString('en-US').padStart(12)} Ir/request${misses}\n`);
    if (KEEP) {
      fs.mkdirSync(KEEP, { recursive: true });
      for (const f of fs.readdirSync(cgDir)) fs.copyFileSync(path.join(cgDir, f), path.join(KEEP, `${name}.${f}`));
    }
    return ir;
  } finally {
    await stop(target);
    await stop(sim);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

interface UpstreamInfo {
  url: string;
  tokenUrl: string;
  accounts: { label: string; accessToken: string; refreshToken: string }[];
}

const CLIENT_KEY = `bench-client-key-${randomBytes(12).toString('hex')}`;

function proxyArgs(cli: string) {
  return (up: UpstreamInfo, tmp: string): string[] => {
    const config = path.join(tmp, 'proxy-config.yaml');
    fs.writeFileSync(
      config,
      proxyConfigYaml({
        port: 0,
        baseUrl: up.url,
        tokenUrl: up.tokenUrl,
        stateDir: path.join(tmp, 'state'),
        clientKey: CLIENT_KEY,
        accounts: up.accounts,
        extra: 'routing:\n  session-affinity: true',
      }),
    );
    return [cli, 'start', '--config', config];
  };
}

async function main(): Promise<void> {
  const proxies = argv.flatMap((a, i) => (argv[i - 1] === '--proxy' ? [a] : []));
  if (proxies.length === 0) proxies.push(`proxy=${path.join(ROOT, 'dist', 'cli.js')}`);
  process.stdout.write(`callgrind: ${REQUESTS} requests after ${WARMUP} warm-up, c=${C}, ${SSE ? 'SSE' : 'JSON'} small body, model ${BENCH_MODEL}\n`);
  const bare = await measure(
    'bare pass-through',
    (up) => [path.join(ROOT, 'out', 'bench', 'passthrough.js'), '--upstream', up.url, '--token', up.accounts[0].accessToken],
    /^passthrough listening on (\S+)$/m,
  );
  for (const p of proxies) {
    const [name, cli] = p.includes('=') ? [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)] : [p, p];
    const ir = await measure(name, proxyArgs(path.resolve(cli)), /^listening on (http:\/\/127\.0\.0\.1:\d+)$/m);
    process.stdout.write(`${''.padEnd(24)} ${(ir / bare).toFixed(3)}× bare\n`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
