/**
 * `npm run bench`: the proxy's cost per request against a bare undici pass-through, and the
 * routing decision cost. Prints a table per cell and a PASS/FAIL line per target. Not part of the
 * test suite. See docs/performance.md.
 *
 * Processes: the fake upstream (`node dist/sim.js` with limits too large to fill), the bare pass-through (bench/passthrough.ts),
 * the proxy under test (`node dist/cli.js start --config F`, the product bundle), the load
 * generator (bench/loadgen.ts) and this orchestrator, which only measures: /proc/<pid>/stat of
 * each target around each measurement window, and its peak RSS.
 *
 * Targets per cell: direct (load generator → upstream), bare, proxy, and in the cells of STORE_CELLS
 * also store (the proxy sharing its state through a local redis-server, docs/shared-pool.md), and with BENCH_BASELINE
 * in every cell also baseline (another build of the CLI, between whose windows and the proxy's sits bare; bench/alternation.ts);
 * run A B C, then C B A (BENCH_ROUNDS rounds alternating). Cells (bench/cells.ts): JSON, SSE burst (25 events in one burst), SSE paced
 * (25 events 1 ms apart) × small / ~250 KB Claude-Code-shaped body × concurrency 1, 32, 256.
 *
 * Environment:
 *   BENCH_QUICK=1          short windows (about 2 minutes in all)
 *   BENCH_ROUNDS=n         rounds per cell (default 3: A B C, C B A, A B C, and 7 for the c=32 cells and every cell with BENCH_BASELINE; quick 2 and 3; at most 31 — judging a change against BENCH_BASELINE wants 21 or more)
 *   BENCH_WARMUP_MS, BENCH_MEASURE_MS   per target and round (default 400 / 1500; quick 150 / 500)
 *   BENCH_CELLS=a,b        only cells whose id contains one of these (ids: json/small/c1, sse-burst/250KB/c32, sse-1ms/…);
 *                          the word `rule` stands for the cells the regression rule watches (default with BENCH_BASELINE)
 *   BENCH_SKIP_ROUTING=1, BENCH_SKIP_HTTP=1, BENCH_SKIP_HOTPATH=1, BENCH_SKIP_STORE=1 (the shared-store target)
 *   BENCH_PROFILE=DIR      run the proxy and the bare pass-through with --cpu-prof into DIR and
 *                          print their top self-time functions (the figures of such a run are not comparable)
 *   BENCH_JSON=FILE        also write every figure as JSON
 *   BENCH_PROXY_FLAGS="…", BENCH_BARE_FLAGS="…"  extra node flags for the proxy / the pass-through
 *                          (e.g. --trace-gc), for investigations
 *   BENCH_LOG_DIR=DIR      keep the proxy's and the pass-through's stdout/stderr there
 *   BENCH_BASELINE=FILE    also measure this other build of the CLI (e.g. an older dist/cli.js) as target
 *                          `baseline` in every cell, in the same rounds as the proxy, and judge the change of
 *                          the CPU ratio (and at c=1 of the time-to-completion ratio) round by round
 *                          (docs/performance.md, "Judging a change")
 */
import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { claudeCodeBody, claudeCodeHeaders, clockTicks, median, percentile, procCpuMicros, procMinorFaults, procSysMicros, procStatusKb, resetPeakRss, sortedCopy } from './common';
import type { RunResult } from './loadgen';
import { formatRoutingTable, growth, type RoutingRow } from './routing';
import { formatSummary, summarise } from './cpuprofile-summary';
import { formatHotpath, type HotpathRow } from './hotpath';
import { startBenchRedis, type BenchRedis } from './redis';
import { proxyConfigYaml } from '../test/support/routerCli';
import { BODIES, CONCURRENCY, KINDS, selectCells, type BodySize, type Cell, type Kind } from './cells';
import { alternationOrder, baselineConfigYaml, changeVerdicts } from './alternation';

const ROOT = path.resolve(__dirname, '..', '..');
const OUT = path.join(ROOT, 'out', 'bench');
const BUILT_CLI = path.join(ROOT, 'dist', 'cli.js');
/** The proxy bundle the run measures: a copy of dist/cli.js taken at start, so a rebuild during the run changes nothing. */
let CLI = BUILT_CLI;
/** BENCH_BASELINE: another build of the CLI measured beside the proxy in every cell (undefined: none). */
const BASELINE_CLI = process.env.BENCH_BASELINE ? path.resolve(process.env.BENCH_BASELINE) : undefined;

const env = process.env;
const num = (v: string | undefined, d: number) => (v !== undefined && v !== '' && Number.isFinite(Number(v)) ? Number(v) : d);
const QUICK = env.BENCH_QUICK === '1';
const ROUNDS = Math.max(1, Math.min(31, num(env.BENCH_ROUNDS, QUICK ? 2 : 3)));
/**
 * Rounds of the c=32 cells, whose CPU ratio is a verdict: a single round's ratio moves by ±40 %
 * on these VMs, and with 5 rounds whole runs of one build still differed by ±0.15, so the median
 * of 7 is read there (unless BENCH_ROUNDS says otherwise).
 */
const VERDICT_ROUNDS = env.BENCH_ROUNDS !== undefined && env.BENCH_ROUNDS !== '' ? ROUNDS : QUICK ? 3 : 7;
/** With a baseline every cell's change is a verdict, so every cell runs the verdict rounds. */
const roundsOf = (cell: Cell): number => (cell.c === 32 || BASELINE_CLI ? VERDICT_ROUNDS : ROUNDS);
const WARMUP_MS = Math.max(50, Math.min(5_000, num(env.BENCH_WARMUP_MS, QUICK ? 150 : 400)));
const MEASURE_MS = Math.max(100, Math.min(20_000, num(env.BENCH_MEASURE_MS, QUICK ? 500 : 1_500)));
const MAX_REQUESTS = 500_000; // per window: a bound, never reached at these window lengths
const PROFILE_DIR = env.BENCH_PROFILE ? path.resolve(env.BENCH_PROFILE) : undefined;
const PROXY_FLAGS = (env.BENCH_PROXY_FLAGS ?? '').split(/\s+/).filter(Boolean);
const BARE_FLAGS = (env.BENCH_BARE_FLAGS ?? '').split(/\s+/).filter(Boolean);
const LOG_DIR = env.BENCH_LOG_DIR ? path.resolve(env.BENCH_LOG_DIR) : undefined;
const SSE_EVENTS = 25; // message_start, content_block_start, ping, 19 deltas, content_block_stop, message_delta, message_stop
const SSE_DELTAS = SSE_EVENTS - 6;
const PATH = '/v1/messages?beta=true';
const LARGE_BODY_BYTES = 250_000;

// ---- targets (the issue's numbers) --------------------------------------------------------

const TARGET = {
  cpuRatio: 1.5,
  addedP50Json: 0.25,
  addedP50Sse: 0.3,
  addedP99: 1,
  largeBodyCpuUs: 800,
  rssMb: 160,
  routingUsAt50: 50,
};

// ---- cells --------------------------------------------------------------------------------

/** The cells that also measure the proxy with a shared store (state-store on a local redis-server): latency at c=1, CPU at c=32. */
const STORE_CELLS = new Set(['json/small/c1', 'json/small/c32']);
/** The redis-server of the store target, started once (undefined: not installed, or BENCH_SKIP_STORE=1). */
let redis: BenchRedis | undefined;

const CELLS = selectCells(env.BENCH_CELLS ?? '', BASELINE_CLI !== undefined);

const KIND_LABEL: Record<Kind, string> = {
  json: 'JSON',
  'sse-burst': `SSE, ${SSE_EVENTS} events in one burst`,
  'sse-1ms': `SSE, ${SSE_EVENTS} events 1 ms apart`,
};

// ---- child processes ----------------------------------------------------------------------

interface Child {
  name: string;
  proc: ChildProcess;
  pid: number;
  out: string;
  err: string;
  exited: Promise<void>;
  /** With BENCH_LOG_DIR: where its whole stdout/stderr go. */
  log?: fs.WriteStream;
}
const children = new Set<Child>();

function startChild(name: string, args: string[], opts: { ipc?: boolean; env?: NodeJS.ProcessEnv } = {}): Child {
  const proc = opts.ipc
    ? fork(args[0], args.slice(1), { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], env: opts.env ?? env, execArgv: [] })
    : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: opts.env ?? env });
  if (proc.pid === undefined) throw new Error(`${name}: could not start`);
  const child: Child = { name, proc, pid: proc.pid, out: '', err: '', exited: new Promise((r) => proc.once('exit', () => r())) };
  if (LOG_DIR && !opts.ipc) {
    fs.mkdirSync(LOG_DIR, { recursive: true });
    child.log = fs.createWriteStream(path.join(LOG_DIR, `${name.replace(/\W+/g, '-')}-${proc.pid}.log`));
  }
  proc.stdout!.setEncoding('utf8').on('data', (s: string) => {
    child.out = (child.out + s).slice(-65_536);
    child.log?.write(s);
  });
  proc.stderr!.setEncoding('utf8').on('data', (s: string) => {
    child.err = (child.err + s).slice(-65_536);
    child.log?.write(s);
  });
  void child.exited.then(() => child.log?.end());
  children.add(child);
  void child.exited.then(() => children.delete(child));
  return child;
}

async function waitFor(child: Child, re: RegExp, ms = 20_000): Promise<RegExpMatchArray> {
  const end = Date.now() + ms;
  for (;;) {
    const m = child.out.match(re);
    if (m) return m;
    if (child.proc.exitCode !== null || Date.now() > end) {
      throw new Error(`${child.name} did not print ${re}\n--- stdout ---\n${child.out}\n--- stderr ---\n${child.err}`);
    }
    await sleep(20);
  }
}

async function stopChild(child: Child, graceMs = 5_000): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  child.proc.kill('SIGTERM');
  const t = setTimeout(() => child.proc.kill('SIGKILL'), graceMs);
  await child.exited;
  clearTimeout(t);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Request/response over the load generator's IPC channel. */
function ask<T>(child: Child, msg: object, expect: string, timeoutMs = 120_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`${child.name}: no '${expect}' within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMsg = (m: { type: string; message?: string }) => {
      if (m.type === 'error') {
        cleanup();
        reject(new Error(`${child.name}: ${m.message}`));
      } else if (m.type === expect) {
        cleanup();
        resolve(m as unknown as T);
      }
    };
    const onExit = () => {
      cleanup();
      reject(new Error(`${child.name} exited\n${child.err}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.proc.off('message', onMsg);
      child.proc.off('exit', onExit);
    };
    child.proc.on('message', onMsg);
    child.proc.once('exit', onExit);
    child.proc.send(msg);
  });
}

// ---- system-wide CPU (noise) --------------------------------------------------------------

/** Busy clock ticks of the whole machine (all CPUs) from /proc/stat. */
function systemBusyTicks(): number {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = f;
  return user + nice + system + irq + softirq + (steal || 0);
}

function safeCpu(pid: number): number {
  try {
    return procCpuMicros(pid);
  } catch {
    return 0;
  }
}

// ---- processes: the upstream per pacing, bare + proxy per cell ---------------------------

interface Target {
  name: 'direct' | 'bare' | 'proxy' | 'store' | 'baseline';
  url: string;
  /** The process whose CPU and memory are measured (none for direct). */
  child?: Child;
  credential: Record<string, string>;
}

/** The fake upstream of one SSE pacing (it serves every cell of that pacing). */
interface Upstream {
  intervalMs: number;
  sim: Child;
  info: { url: string; tokenUrl: string; accounts: { label: string; accessToken: string; refreshToken: string }[] };
}

/** Fresh bare pass-through and proxy processes for one cell (so each cell's CPU and peak RSS are its own). */
interface Targets {
  bare: Child;
  proxy: Child;
  /** The proxy with a shared store, in the cells of STORE_CELLS. */
  store?: Child;
  /** The other build of BENCH_BASELINE. */
  baseline?: Child;
  list: Target[];
  tmp: string;
}

async function startUpstream(intervalMs: number): Promise<Upstream> {
  // The product's fake upstream with windows too large to fill (every answer a 200) and a bounded request log.
  const sim = startChild('upstream', [
    path.join(ROOT, 'dist', 'sim.js'),
    '--accounts',
    '3',
    '--deltas',
    String(SSE_DELTAS),
    '--interval-ms',
    String(intervalMs),
    '--five-hour-limit',
    '1e15',
    '--seven-day-limit',
    '1e15',
    '--max-records',
    '1000',
  ]);
  await waitFor(sim, /^sim listening on /m);
  const info = JSON.parse((await waitFor(sim, /^\{.*\}$/m))[0]) as Upstream['info'];
  return { intervalMs, sim, info };
}

async function startTargets(up: Upstream, cell: Cell): Promise<Targets> {
  const { info } = up;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'claude-router-bench-'));
  const clientKey = `bench-client-key-${randomBytes(12).toString('hex')}`;
  const prof = (name: string) => (PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${profileDir(cell, name)}`] : []);

  const bare = startChild('bare pass-through', [...prof('bare'), ...BARE_FLAGS, path.join(OUT, 'passthrough.js'), '--upstream', info.url, '--token', info.accounts[0].accessToken]);
  const q = JSON.stringify;
  const configFile = path.join(tmp, 'proxy-config.yaml');
  fs.writeFileSync(
    configFile,
    proxyConfigYaml({
      port: 0,
      baseUrl: info.url,
      tokenUrl: info.tokenUrl,
      stateDir: path.join(tmp, 'state'),
      clientKey: clientKey,
      accounts: info.accounts,
      extra: 'routing:\n  session-affinity: true',
    }),
  );
  const proxyEnv = { ...env };
  delete proxyEnv.CLAUDE_ROUTER_QUOTA_ROUTING;
  const proxy = startChild('proxy', [...prof('proxy'), ...PROXY_FLAGS, CLI, 'start', '--config', configFile], { env: proxyEnv });
  // The same proxy sharing its state through the store: its own state directory, an empty pool (the cell before's is flushed).
  let store: Child | undefined;
  if (redis && STORE_CELLS.has(cell.id)) {
    await redis.flush();
    const storeDir = path.join(tmp, 'store-state');
    fs.mkdirSync(storeDir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(storeDir, 'store.key'), redis.keyText, { mode: 0o600 });
    const storeConfig = path.join(tmp, 'store-config.yaml');
    fs.writeFileSync(storeConfig, fs.readFileSync(configFile, 'utf8').replace(/^state-dir: .*$/m, `state-dir: ${q(storeDir)}\nstate-store: ${q(redis.url)}`));
    store = startChild('proxy+store', [...prof('store'), ...PROXY_FLAGS, CLI, 'start', '--config', storeConfig], { env: proxyEnv });
  }
  // The other build: the same configuration, its own state directory.
  let baseline: Child | undefined;
  if (BASELINE_CLI) {
    const baselineConfig = path.join(tmp, 'baseline-config.yaml');
    fs.writeFileSync(baselineConfig, baselineConfigYaml(fs.readFileSync(configFile, 'utf8'), path.join(tmp, 'baseline-state')));
    baseline = startChild('baseline', [...prof('baseline'), ...PROXY_FLAGS, BASELINE_CLI, 'start', '--config', baselineConfig], { env: proxyEnv });
  }
  const bareUrl = (await waitFor(bare, /^passthrough listening on (\S+)$/m))[1];
  const listening = /^listening on (http:\/\/127\.0\.0\.1:\d+)$/m;
  const proxyUrl = (await waitFor(proxy, listening))[1];
  const storeUrl = store ? (await waitFor(store, listening))[1] : undefined;
  const baselineUrl = baseline ? (await waitFor(baseline, listening))[1] : undefined;
  const key = { 'x-claude-router-key': clientKey };
  const direct: Target = { name: 'direct', url: info.url, credential: { authorization: `Bearer ${info.accounts[0].accessToken}` } };
  const bareT: Target = { name: 'bare', url: bareUrl, child: bare, credential: key };
  const proxyT: Target = { name: 'proxy', url: proxyUrl, child: proxy, credential: key };
  const storeT: Target | undefined = store && storeUrl ? { name: 'store', url: storeUrl, child: store, credential: key } : undefined;
  const baselineT: Target | undefined = baseline && baselineUrl ? { name: 'baseline', url: baselineUrl, child: baseline, credential: key } : undefined;
  return { bare, proxy, store, baseline, tmp, list: alternationOrder({ direct, bare: bareT, proxy: proxyT, store: storeT, baseline: baselineT }) };
}

async function stopTargets(t: Targets): Promise<void> {
  const children = [t.proxy, t.bare, ...(t.store ? [t.store] : []), ...(t.baseline ? [t.baseline] : [])];
  await Promise.all(children.map((c) => stopChild(c)));
  for (const c of children) {
    const errs = c.err.split('\n').filter((l) => / (WARN|ERROR) /.test(l));
    if (errs.length) process.stdout.write(`  note: ${c.name} logged ${errs.length} warning/error lines, e.g.\n    ${errs.slice(0, 3).join('\n    ')}\n`);
  }
  fs.rmSync(t.tmp, { recursive: true, force: true });
}

function profileDir(cell: Cell, who: string): string {
  return path.join(PROFILE_DIR!, `${cell.id.replace(/\//g, '_')}-${who}`);
}

// ---- measuring ----------------------------------------------------------------------------

/** The headers Claude Code sends (docs/claude-code-client.md), one session per concurrent slot. */
function slotHeaders(c: number, credential: Record<string, string>): Record<string, string>[] {
  return Array.from({ length: c }, (_, i) => ({
    'content-type': 'application/json',
    accept: 'application/json',
    'anthropic-version': '2023-06-01',
    'anthropic-beta':
      'claude-code-20250219,oauth-2025-04-20,interleaved-thinking-2025-05-14,context-management-2025-06-27,fine-grained-tool-streaming-2025-05-14,extended-cache-ttl-2025-04-11',
    ...claudeCodeHeaders(`b3f0c7a2-5d1e-4c8b-9a6f-${i.toString(16).padStart(12, '0')}`),
    ...credential,
  }));
}

interface Window {
  round: number;
  requests: number;
  /** Requests of the warm-up before this window (not measured). */
  warmRequests: number;
  errors: number;
  errorSamples: string[];
  wallMs: number;
  ttfbMs: number[];
  totalMs: number[];
  chunks: number[];
  cpuUs: number | null;
  /** The kernel-mode part of {@link cpuUs}, µs. */
  kernelUs: number | null;
  /** Minor page faults of the target process during the window. */
  minorFaults: number | null;
  peakRssKb: number | null;
  /** CPU cores used by processes outside the benchmark during the window. */
  foreignCores: number;
}

const bodies = new Map<string, string>();
function bodyFor(size: BodySize, stream: boolean): string {
  const key = `${size}/${stream}`;
  let b = bodies.get(key);
  if (!b) {
    b = claudeCodeBody(size === 'small' ? 0 : LARGE_BODY_BYTES, { stream, sessionId: 'b3f0c7a2-5d1e-4c8b-9a6f-000000000000' }).toString('base64');
    bodies.set(key, b);
  }
  return b;
}

/** Requests each target served in the current cell (warm-up included), for per-request profile figures. */
const servedInCell = new Map<string, number>();

async function measure(lg: Child, up: Upstream, targets: Targets, cell: Cell, target: Target, round: number): Promise<Window> {
  const sse = cell.kind !== 'json';
  await ask(lg, { cmd: 'setup', url: target.url, path: PATH, headers: slotHeaders(cell.c, target.credential), body: bodyFor(cell.body, sse), sse }, 'ready');
  // Fresh processes: the first round warms up with at least 1 000 requests (at most 2 s), so V8
  // has optimised the hot paths and sized its heap; later rounds only re-warm connections.
  const warm = await ask<RunResult>(
    lg,
    round === 0 && target.child
      ? { cmd: 'run', durationMs: WARMUP_MS, minRequests: QUICK ? 300 : 1_000, capMs: QUICK ? 1_000 : 2_000, maxRequests: MAX_REQUESTS, record: false }
      : { cmd: 'run', durationMs: WARMUP_MS, maxRequests: MAX_REQUESTS, record: false },
    'done',
  );
  if (warm.errors > 0 && warm.errors === warm.requests) throw new Error(`${target.name} ${cell.id}: every warm-up request failed: ${warm.errorSamples.join('; ')}`);

  const pid = target.child?.pid;
  const ours = [up.sim.pid, lg.pid, process.pid, ...targets.list.flatMap((t) => (t.child ? [t.child.pid] : []))];
  const peakReset = pid !== undefined && resetPeakRss(pid);
  let sampledPeak = 0;
  const sampler = pid !== undefined ? setInterval(() => (sampledPeak = Math.max(sampledPeak, procStatusKb(pid, 'VmRSS') || 0)), 50) : undefined;
  const cpu0 = pid !== undefined ? procCpuMicros(pid) : 0;
  const kernel0 = pid !== undefined ? procSysMicros(pid) : 0;
  const flt0 = pid !== undefined ? procMinorFaults(pid) : 0;
  const sys0 = systemBusyTicks();
  const ours0 = ours.reduce((s, p) => s + safeCpu(p), 0);
  const t0 = performance.now();
  const r = await ask<RunResult>(lg, { cmd: 'run', durationMs: MEASURE_MS, maxRequests: MAX_REQUESTS, record: true }, 'done');
  const wall = performance.now() - t0;
  const cpu1 = pid !== undefined ? procCpuMicros(pid) : 0;
  const kernel1 = pid !== undefined ? procSysMicros(pid) : 0;
  const flt1 = pid !== undefined ? procMinorFaults(pid) : 0;
  const sys1 = systemBusyTicks();
  const ours1 = ours.reduce((s, p) => s + safeCpu(p), 0);
  if (sampler) clearInterval(sampler);
  let peakRssKb: number | null = null;
  if (pid !== undefined) {
    sampledPeak = Math.max(sampledPeak, procStatusKb(pid, 'VmRSS') || 0);
    peakRssKb = peakReset ? Math.max(procStatusKb(pid, 'VmHWM') || 0, sampledPeak) : sampledPeak;
  }
  await ask(lg, { cmd: 'teardown' }, 'closed');
  servedInCell.set(target.name, (servedInCell.get(target.name) ?? 0) + warm.requests + r.requests);
  const foreignUs = ((sys1 - sys0) * 1e6) / clockTicks() - (ours1 - ours0);
  return {
    round,
    requests: r.requests,
    warmRequests: warm.requests,
    errors: r.errors,
    errorSamples: r.errorSamples,
    wallMs: r.wallMs,
    ttfbMs: r.ttfbMs,
    totalMs: r.totalMs,
    chunks: r.chunks,
    cpuUs: pid !== undefined ? cpu1 - cpu0 : null,
    kernelUs: pid !== undefined ? kernel1 - kernel0 : null,
    minorFaults: pid !== undefined ? flt1 - flt0 : null,
    peakRssKb,
    foreignCores: Math.max(0, foreignUs / (wall * 1000)),
  };
}

// ---- aggregation and printing ---------------------------------------------------------------

interface Stats {
  target: string;
  requests: number;
  errors: number;
  reqPerS: number;
  ttfbP50: number;
  ttfbP99: number;
  totalP50: number;
  totalP99: number;
  cpuUsPerReq: number | null;
  cpuUsPerReqRounds: number[];
  /** Per round: the kernel-mode part of the CPU per request, µs. */
  kernelUsPerReqRounds: number[];
  faultsPerReq: number | null;
  /** Per round: time to completion p50 and p99, ms. */
  totalP50Rounds: number[];
  totalP99Rounds: number[];
  chunksMean: number;
  chunksMin: number;
  chunksMax: number;
  peakRssMb: number | null;
  foreignCores: number;
}

function aggregate(target: string, ws: Window[]): Stats {
  const ttfb = sortedCopy(ws.flatMap((w) => w.ttfbMs));
  const total = sortedCopy(ws.flatMap((w) => w.totalMs));
  const chunks = ws.flatMap((w) => w.chunks);
  const requests = ws.reduce((s, w) => s + w.requests, 0);
  const cpuKnown = ws.every((w) => w.cpuUs !== null);
  const rss = ws.map((w) => w.peakRssKb).filter((v): v is number => v !== null);
  return {
    target,
    requests,
    errors: ws.reduce((s, w) => s + w.errors, 0),
    reqPerS: (1000 * requests) / ws.reduce((s, w) => s + w.wallMs, 0),
    ttfbP50: percentile(ttfb, 50),
    ttfbP99: percentile(ttfb, 99),
    totalP50: percentile(total, 50),
    totalP99: percentile(total, 99),
    cpuUsPerReq: cpuKnown ? ws.reduce((s, w) => s + w.cpuUs!, 0) / Math.max(1, requests) : null,
    cpuUsPerReqRounds: cpuKnown ? ws.map((w) => w.cpuUs! / Math.max(1, w.requests)) : [],
    kernelUsPerReqRounds: cpuKnown ? ws.map((w) => w.kernelUs! / Math.max(1, w.requests)) : [],
    faultsPerReq: cpuKnown ? ws.reduce((s, w) => s + w.minorFaults!, 0) / Math.max(1, requests) : null,
    totalP50Rounds: ws.map((w) => percentile(sortedCopy(w.totalMs), 50)),
    totalP99Rounds: ws.map((w) => percentile(sortedCopy(w.totalMs), 99)),
    chunksMean: chunks.length ? chunks.reduce((s, v) => s + v, 0) / chunks.length : NaN,
    // Reduced, not spread: a long run has more samples than the stack has room for arguments.
    chunksMin: chunks.length ? chunks.reduce((a, v) => Math.min(a, v)) : NaN,
    chunksMax: chunks.length ? chunks.reduce((a, v) => Math.max(a, v)) : NaN,
    peakRssMb: rss.length ? Math.max(...rss) / 1024 : null,
    foreignCores: ws.reduce((s, w) => s + w.foreignCores, 0) / ws.length,
  };
}

/** One round's figures, for the JSON output (raw samples are not kept). */
function roundSummary(w: Window) {
  const ttfb = sortedCopy(w.ttfbMs);
  const total = sortedCopy(w.totalMs);
  return {
    round: w.round,
    requests: w.requests,
    warmRequests: w.warmRequests,
    errors: w.errors,
    cpuUsPerReq: w.cpuUs === null ? null : w.cpuUs / Math.max(1, w.requests),
    ttfbP50: percentile(ttfb, 50),
    totalP50: percentile(total, 50),
    totalP99: percentile(total, 99),
    peakRssKb: w.peakRssKb,
    foreignCores: w.foreignCores,
  };
}

const f2 = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : '–');
const f3 = (v: number) => (Number.isFinite(v) ? v.toFixed(3) : '–');
const signed = (v: number) => (Number.isFinite(v) ? `${v >= 0 ? '+' : ''}${v.toFixed(3)}` : '–');

function cellTitle(cell: Cell): string {
  const bytes = Buffer.byteLength(Buffer.from(bodyFor(cell.body, cell.kind !== 'json'), 'base64'));
  return `${KIND_LABEL[cell.kind]} · ${cell.body} body (${(bytes / 1024).toFixed(1)} KiB) · concurrency ${cell.c}`;
}

function printCell(cell: Cell, stats: Stats[]): void {
  const direct = stats.find((s) => s.target === 'direct')!;
  const rows = [['target', 'req/s', 'TTFB p50', 'p99', 'done p50', 'p99', 'added p50', 'added p99', 'CPU µs/req (per round)', 'faults/req', 'chunks/resp', 'peak RSS', 'errors']];
  for (const s of stats) {
    const added = s.target === 'direct' ? ['', ''] : [signed(s.totalP50 - direct.totalP50), signed(s.totalP99 - direct.totalP99)];
    const cpu = s.cpuUsPerReq === null ? '–' : `${s.cpuUsPerReq.toFixed(0)} (${s.cpuUsPerReqRounds.map((v) => v.toFixed(0)).join('/')})`;
    const chunks = cell.kind === 'json' ? f2(s.chunksMean) : `${f2(s.chunksMean)} [${s.chunksMin}–${s.chunksMax}]`;
    rows.push([
      s.target,
      s.reqPerS.toFixed(0),
      f3(s.ttfbP50),
      f3(s.ttfbP99),
      f3(s.totalP50),
      f3(s.totalP99),
      ...added,
      cpu,
      s.faultsPerReq === null ? '–' : s.faultsPerReq.toFixed(1),
      chunks,
      s.peakRssMb === null ? '–' : `${s.peakRssMb.toFixed(0)} MB`,
      String(s.errors),
    ]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  process.stdout.write(`\n== ${cellTitle(cell)} ==  (times in ms; added = target − direct)\n`);
  for (const r of rows) process.stdout.write(`  ${r.map((v, i) => (i === 0 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ')}\n`);
  const foreign = Math.max(...stats.map((s) => s.foreignCores));
  if (foreign > 0.25) process.stdout.write(`  (other processes used up to ${foreign.toFixed(2)} cores during these windows)\n`);
  for (const s of stats) if (s.errors > 0) process.stdout.write(`  WARNING: ${s.target} had ${s.errors} failed requests\n`);
}

// ---- verdicts -----------------------------------------------------------------------------

interface Verdict {
  pass: boolean;
  text: string;
}

function verdicts(results: Map<string, Stats[]>, routing: RoutingRow[] | null): Verdict[] {
  const out: Verdict[] = [];
  const get = (kind: Kind, body: BodySize, c: number, target: string) => results.get(`${kind}/${body}/c${c}`)?.find((s) => s.target === target);
  const has = (kind: Kind, body: BodySize, c: number) => results.has(`${kind}/${body}/c${c}`);
  const invalid = (...ss: (Stats | undefined)[]) => ss.some((s) => !s || s.errors > 0);

  // 1. CPU per request ≤ 1.5× bare, c=32.
  for (const kind of KINDS)
    for (const body of BODIES) {
      if (!has(kind, body, 32)) continue;
      const p = get(kind, body, 32, 'proxy')!;
      const b = get(kind, body, 32, 'bare')!;
      // Judged on the median of per-round ratios: within a round the two windows are adjacent
      // in time (… B C, C B …), so they share the machine's background load.
      const perRound = p.cpuUsPerReqRounds.map((v, i) => v / b.cpuUsPerReqRounds[i]);
      const ratio = median(perRound);
      out.push({
        pass: ratio <= TARGET.cpuRatio && !invalid(p, b),
        text: `CPU/request ≤ ${TARGET.cpuRatio}× bare · ${kind} ${body} c=32: ${ratio.toFixed(2)}× (median of rounds ${perRound.map((r) => r.toFixed(2)).join('/')}); proxy ${p.cpuUsPerReq!.toFixed(0)} µs vs bare ${b.cpuUsPerReq!.toFixed(0)} µs`,
      });
    }
  // 1b. With a baseline build: the change of the watched ratios, round by round, in every cell (bench/alternation.ts).
  out.push(...changeVerdicts(results));
  // 2. Added time to completion at c=1.
  for (const kind of KINDS)
    for (const body of BODIES) {
      if (!has(kind, body, 1)) continue;
      const p = get(kind, body, 1, 'proxy')!;
      const b = get(kind, body, 1, 'bare')!;
      const d = get(kind, body, 1, 'direct')!;
      const lim50 = kind === 'json' ? TARGET.addedP50Json : TARGET.addedP50Sse;
      const a50 = p.totalP50 - d.totalP50;
      const a99 = p.totalP99 - d.totalP99;
      out.push({
        pass: a50 <= lim50 && a99 <= TARGET.addedP99 && !invalid(p, d),
        text:
          `added time to completion c=1 · ${kind} ${body}: p50 ${a50.toFixed(3)} ms (≤ ${lim50}; rounds ${p.totalP50Rounds.map((v, i) => (v - d.totalP50Rounds[i]).toFixed(2)).join('/')}), ` +
          `p99 ${a99.toFixed(3)} ms (≤ ${TARGET.addedP99}); bare adds ${(b.totalP50 - d.totalP50).toFixed(3)} / ${(b.totalP99 - d.totalP99).toFixed(3)}`,
      });
    }
  // 3. 250 KB body: ≤ 0.8 ms CPU per request.
  for (const kind of KINDS) {
    const cs = CONCURRENCY.filter((c) => has(kind, '250KB', c));
    if (!cs.length) continue;
    const vals = cs.map((c) => ({ c, p: get(kind, '250KB', c, 'proxy')!, b: get(kind, '250KB', c, 'bare')! }));
    const worst = Math.max(...vals.map((v) => v.p.cpuUsPerReq!));
    out.push({
      pass: worst <= TARGET.largeBodyCpuUs && !invalid(...vals.map((v) => v.p)),
      text: `250 KB body CPU/request ≤ ${TARGET.largeBodyCpuUs} µs · ${kind}: proxy ${vals.map((v) => `c=${v.c} ${v.p.cpuUsPerReq!.toFixed(0)}`).join(', ')} µs (bare ${vals.map((v) => v.b.cpuUsPerReq!.toFixed(0)).join(', ')})`,
    });
  }
  // 4. Every SSE event forwarded as it arrives: the proxy's chunks per response match the bare pass-through's.
  for (const kind of ['sse-burst', 'sse-1ms'] as Kind[])
    for (const body of BODIES) {
      const cs = CONCURRENCY.filter((c) => has(kind, body, c));
      if (!cs.length) continue;
      const vals = cs.map((c) => ({ c, p: get(kind, body, c, 'proxy')!, b: get(kind, body, c, 'bare')! }));
      const ok = vals.every((v) => v.p.chunksMean >= v.b.chunksMean * 0.98);
      out.push({
        pass: ok && !invalid(...vals.map((v) => v.p)),
        text: `SSE chunks/response same as bare · ${kind} ${body}: ${vals.map((v) => `c=${v.c} proxy ${f2(v.p.chunksMean)} vs bare ${f2(v.b.chunksMean)}`).join(', ')}`,
      });
    }
  // 5. Peak RSS at 256 concurrent streams.
  const rss = (['sse-burst', 'sse-1ms'] as Kind[]).flatMap((kind) =>
    BODIES.filter((body) => has(kind, body, 256)).map((body) => ({ where: `${kind} ${body}`, p: get(kind, body, 256, 'proxy')!, b: get(kind, body, 256, 'bare')! })),
  );
  if (rss.length) {
    const worst = rss.reduce((a, v) => (v.p.peakRssMb! > a.p.peakRssMb! ? v : a));
    out.push({
      pass: worst.p.peakRssMb! <= TARGET.rssMb,
      text: `peak RSS ≤ ${TARGET.rssMb} MB at 256 concurrent streams: proxy ${rss.map((v) => `${v.where} ${v.p.peakRssMb!.toFixed(0)}`).join(', ')} MB (bare ${rss.map((v) => v.b.peakRssMb!.toFixed(0)).join(', ')})`,
    });
  }
  // 6. The shared store's cost (docs/shared-pool.md): the proxy with state-store on, as ratios to the bare pass-through.
  const st32 = get('json', 'small', 32, 'store');
  const b32 = get('json', 'small', 32, 'bare');
  const p32 = get('json', 'small', 32, 'proxy');
  if (st32 && b32 && p32) {
    const perRound = st32.cpuUsPerReqRounds.map((v, i) => v / b32.cpuUsPerReqRounds[i]);
    const alone = median(p32.cpuUsPerReqRounds.map((v, i) => v / b32.cpuUsPerReqRounds[i]));
    out.push({
      pass: median(perRound) <= TARGET.cpuRatio && !invalid(st32, b32),
      text: `store on · CPU/request ≤ ${TARGET.cpuRatio}× bare · json small c=32: ${median(perRound).toFixed(2)}× (rounds ${perRound.map((r) => r.toFixed(2)).join('/')}; the proxy without a store ${alone.toFixed(2)}×); ${st32.cpuUsPerReq!.toFixed(0)} µs vs bare ${b32.cpuUsPerReq!.toFixed(0)} µs`,
    });
  }
  const st1 = get('json', 'small', 1, 'store');
  const b1 = get('json', 'small', 1, 'bare');
  const p1 = get('json', 'small', 1, 'proxy');
  const d1 = get('json', 'small', 1, 'direct');
  if (st1 && b1 && p1 && d1) {
    const a50 = st1.totalP50 - d1.totalP50;
    const a99 = st1.totalP99 - d1.totalP99;
    out.push({
      pass: a50 <= TARGET.addedP50Json && a99 <= TARGET.addedP99 && !invalid(st1, d1),
      text:
        `store on · added time to completion c=1 · json small: p50 ${a50.toFixed(3)} ms (≤ ${TARGET.addedP50Json}), p99 ${a99.toFixed(3)} ms (≤ ${TARGET.addedP99}); ` +
        `time to completion ${(st1.totalP50 / b1.totalP50).toFixed(2)}× bare's at p50, ${(st1.totalP99 / b1.totalP99).toFixed(2)}× at p99 (the proxy without a store ${(p1.totalP50 / b1.totalP50).toFixed(2)}× / ${(p1.totalP99 / b1.totalP99).toFixed(2)}×)`,
    });
  }
  // 7. Routing decision cost.
  if (routing) {
    const at50 = routing.find((r) => r.accounts === 50);
    if (at50)
      out.push({ pass: at50.usPerDecision <= TARGET.routingUsAt50, text: `routing decision ≤ ${TARGET.routingUsAt50} µs at 50 accounts: ${at50.usPerDecision.toFixed(2)} µs` });
    const g = growth(routing).filter((x) => x.from >= 10);
    if (g.length) {
      out.push({
        // 15 % slack for timing noise between two medians.
        pass: g.every((x) => x.measured <= x.nlogn * 1.15),
        text: `routing cost grows no worse than n·log n: ${g.map((x) => `${x.from}→${x.to} ×${x.measured.toFixed(2)} (n·log n ×${x.nlogn.toFixed(2)})`).join(', ')}`,
      });
    }
  }
  return out;
}

// ---- main ---------------------------------------------------------------------------------

/** Runs out/bench/<script>.js in its own process and returns the rows it sends back. */
async function runRows<T>(script: string): Promise<T[]> {
  const child = startChild(`${script} bench`, [path.join(OUT, `${script}.js`), ...(QUICK ? ['--quick'] : [])], { ipc: true });
  const rows = await new Promise<T[]>((resolve, reject) => {
    child.proc.once('message', (m: { rows: T[] }) => resolve(m.rows));
    child.proc.once('exit', (code) => reject(new Error(`${script} bench exited (${code})\n${child.err}`)));
  });
  await stopChild(child);
  return rows;
}

function machineLine(): string {
  let cpu = '';
  try {
    cpu = /model name\s*:\s*(.*)/.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? '';
  } catch {
    /* not Linux */
  }
  return `node ${process.version}, ${os.cpus().length} CPUs (${cpu.trim()}), load average ${os
    .loadavg()
    .map((v) => v.toFixed(2))
    .join(' ')}`;
}

/** Pins the proxy bundle (a private copy) and describes it: hash, build time, source tree state. */
function pinBuild(): string {
  if (!fs.existsSync(BUILT_CLI)) throw new Error(`${BUILT_CLI} is missing: run \`npm run build\` first`);
  if (BASELINE_CLI && !fs.existsSync(BASELINE_CLI)) throw new Error(`BENCH_BASELINE: ${BASELINE_CLI} does not exist`);
  // Kept with the profiles when profiling (their source locations map through it).
  const dir = PROFILE_DIR ? path.join(PROFILE_DIR, 'cli') : fs.mkdtempSync(path.join(os.tmpdir(), 'claude-router-bench-cli-'));
  fs.mkdirSync(dir, { recursive: true });
  CLI = path.join(dir, 'cli.js');
  fs.copyFileSync(BUILT_CLI, CLI);
  if (fs.existsSync(`${BUILT_CLI}.map`)) fs.copyFileSync(`${BUILT_CLI}.map`, `${CLI}.map`);
  const hash = createHash('sha256').update(fs.readFileSync(CLI)).digest('hex').slice(0, 12);
  let tree = '';
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT, encoding: 'utf8' }).trim();
    tree = `, git ${head}${dirty ? ` + uncommitted changes in ${dirty.split('\n').length} src file(s)` : ''}`;
  } catch {
    /* not a git checkout */
  }
  const baseline = BASELINE_CLI ? `\nbaseline: ${BASELINE_CLI} sha256 ${createHash('sha256').update(fs.readFileSync(BASELINE_CLI)).digest('hex').slice(0, 12)}…` : '';
  return `proxy under test: dist/cli.js sha256 ${hash}…, built ${fs.statSync(BUILT_CLI).mtime.toISOString()}${tree}${baseline}`;
}

async function main(): Promise<void> {
  const started = Date.now();
  const build = pinBuild();
  process.stdout.write(`claude-router benchmarks — ${new Date().toISOString()}\n${machineLine()}\n${build}\n`);
  process.stdout.write(
    `mode: ${QUICK ? 'quick' : 'full'}; per target and round: ${WARMUP_MS} ms warm-up + ${MEASURE_MS} ms measured; ${ROUNDS} rounds (${VERDICT_ROUNDS} at c=32${BASELINE_CLI ? ' and in every cell, against the baseline' : ''}) (A B C, C B A, …); targets: direct = load generator → fake upstream, bare = bench/passthrough.ts, proxy = dist/cli.js (3 accounts, session affinity on)\n`,
  );
  if (PROFILE_DIR) process.stdout.write(`profiling into ${PROFILE_DIR}: these figures include the profiler's overhead\n`);

  const results = new Map<string, Stats[]>();
  const json: Record<string, unknown> = {
    date: new Date().toISOString(),
    machine: machineLine(),
    build,
    quick: QUICK,
    rounds: ROUNDS,
    verdictRounds: VERDICT_ROUNDS,
    warmupMs: WARMUP_MS,
    measureMs: MEASURE_MS,
    cells: {},
  };
  const foreign: number[] = [];
  const cpuSpread: number[] = [];

  if (env.BENCH_SKIP_HTTP !== '1' && CELLS.length > 0) {
    if (env.BENCH_SKIP_STORE !== '1' && CELLS.some((c) => STORE_CELLS.has(c.id))) {
      redis = await startBenchRedis();
      if (!redis) process.stdout.write('note: redis-server is not installed: the shared-store target is left out (scripts/install-redis.sh installs it)\n');
    }
    const lg = startChild('load generator', [path.join(OUT, 'loadgen.js')], { ipc: true });
    for (const intervalMs of [0, 1]) {
      const cells = CELLS.filter((c) => (c.kind === 'sse-1ms') === (intervalMs === 1));
      if (!cells.length) continue;
      const up = await startUpstream(intervalMs);
      try {
        for (const cell of cells) {
          const targets = await startTargets(up, cell);
          servedInCell.clear();
          const windows = new Map<string, Window[]>(targets.list.map((t) => [t.name, []]));
          try {
            for (let round = 0; round < roundsOf(cell); round++) {
              const order = round % 2 === 0 ? targets.list : [...targets.list].reverse();
              for (const t of order) windows.get(t.name)!.push(await measure(lg, up, targets, cell, t, round));
            }
          } finally {
            await stopTargets(targets);
          }
          const stats = targets.list.map((t) => aggregate(t.name, windows.get(t.name)!));
          results.set(cell.id, stats);
          printCell(cell, stats);
          for (const s of stats) {
            foreign.push(s.foreignCores);
            if (s.cpuUsPerReqRounds.length > 1) cpuSpread.push(Math.max(...s.cpuUsPerReqRounds) / Math.min(...s.cpuUsPerReqRounds) - 1);
          }
          (json.cells as Record<string, unknown>)[cell.id] = { stats, rounds: Object.fromEntries([...windows].map(([k, ws]) => [k, ws.map(roundSummary)])) };
          if (PROFILE_DIR) {
            for (const who of ['proxy', 'bare', ...(targets.store ? ['store'] : []), ...(targets.baseline ? ['baseline'] : [])]) {
              const dir = profileDir(cell, who);
              const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')) : [];
              for (const f of files) process.stdout.write(`\n${formatSummary(`${who} (${path.join(dir, f)})`, summarise(path.join(dir, f), 25), servedInCell.get(who))}\n`);
            }
          }
        }
      } finally {
        await stopChild(up.sim);
      }
    }
    lg.proc.send({ cmd: 'exit' });
    await stopChild(lg);
    redis?.stop();
  }

  let routing: RoutingRow[] | null = null;
  if (env.BENCH_SKIP_ROUTING !== '1') {
    routing = await runRows<RoutingRow>('routing');
    process.stdout.write(`\n== routing decision (computeMetrics × n + affinity lookup + planRoute + bind), expiry-first, session affinity on ==\n${formatRoutingTable(routing)}\n`);
    json.routing = routing;
  }

  if (env.BENCH_SKIP_HOTPATH !== '1') {
    const rows = await runRows<HotpathRow>('hotpath');
    process.stdout.write(`\n== the proxy's per-request steps, in-process (real src/ functions, real sim answers; not a target, shows where CPU goes) ==\n${formatHotpath(rows)}\n`);
    json.hotpath = rows;
  }

  const vs = verdicts(results, routing);
  process.stdout.write(`\n== verdicts ==${QUICK ? ' (quick mode: short windows, two rounds — indicative only; use the full run for figures)' : ''}\n`);
  for (const v of vs) process.stdout.write(`${v.pass ? 'PASS' : 'FAIL'}  ${v.text}\n`);
  if (foreign.length) {
    process.stdout.write(
      `\nnoise: CPU/request differed between rounds by a median ${(100 * median(cpuSpread.length ? cpuSpread : [0])).toFixed(1)} % (max ${(100 * Math.max(0, ...cpuSpread)).toFixed(1)} %); ` +
        `other processes used a median ${median(foreign).toFixed(2)} cores (max ${Math.max(...foreign).toFixed(2)}) of ${os.cpus().length} during measurement windows\n`,
    );
  }
  process.stdout.write(
    `finished in ${((Date.now() - started) / 1000).toFixed(0)} s; load average now ${os
      .loadavg()
      .map((v) => v.toFixed(2))
      .join(' ')}\n`,
  );
  json.verdicts = vs;
  if (env.BENCH_JSON) fs.writeFileSync(env.BENCH_JSON, JSON.stringify(json, null, 1));
  if (!PROFILE_DIR) fs.rmSync(path.dirname(CLI), { recursive: true, force: true });
}

const killAll = () => {
  for (const c of children) c.proc.kill('SIGKILL');
  redis?.stop();
};
if (require.main === module) {
  process.once('SIGINT', () => {
    killAll();
    process.exit(130);
  });
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
      killAll();
      process.exit(1);
    },
  );
}
