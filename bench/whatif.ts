/**
 * `npm run bench:whatif`: how fast the what-if simulator replays. Not part of the test suite.
 *
 * 1. A generated week (src/whatif/generate.ts, WEEK_SHAPE) replayed in this process under every
 *    policy of the catalogue: requests per second per policy.
 * 2. A log the size of the design seed's telemetry (134,000 decisions over 9.5 days), written to a
 *    temporary file and simulated by the built CLI (`node dist/cli.js simulate FILE --policy …` ×6,
 *    the log streamed): wall time and peak RSS of that process, against the targets of issue 15
 *    (under 30 s, under 500 MB).
 *
 * Environment: WHATIF_BENCH_DECISIONS=n (default 134000), WHATIF_BENCH_KEEP=1 keeps the log.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DecisionLineEncoder } from '../src/routing/decisionLine';
import { DEFAULT_POLICY } from '../src/routing/policy';
import { generateWorkload, WEEK_SHAPE, writeDecisionLog, type WorkloadShape } from '../src/whatif/generate';
import { catalogueNames, parsePolicyName, withPolicyName } from '../src/whatif/policies';
import { simulate } from '../src/whatif/simulate';

const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const DECISIONS = Number(process.env.WHATIF_BENCH_DECISIONS ?? 134_000);
const TARGET_WALL_S = 30;
const TARGET_RSS_MB = 500;
const DAY = 86_400_000;

/** Six policies: the two rankings of fill-first, with and without affinity, and two other strategies. */
const SIX = ['fill-first:expiry-first', 'fill-first:headroom-first', 'round-robin', 'capacity-weighted', 'usage-weighted', 'weighted'];

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

function weekSpeed(): void {
  const w = generateWorkload(WEEK_SHAPE);
  const base = { ...DEFAULT_POLICY, sessionAffinity: true };
  let total = 0;
  const rows: string[] = [];
  for (const name of catalogueNames()) {
    const t0 = performance.now();
    simulate(w, { name, policy: withPolicyName(base, parsePolicyName(name)) });
    const ms = performance.now() - t0;
    total += ms;
    rows.push(`  ${name.padEnd(28)} ${ms.toFixed(0).padStart(6)} ms  ${fmt((w.requests.length / ms) * 1000).padStart(9)} requests/s`);
  }
  const days = (w.endMs - w.startMs) / DAY;
  process.stdout.write(
    `a generated week: ${fmt(w.requests.length)} requests over ${days.toFixed(1)} days, replayed under ${rows.length} policies in ${(total / 1000).toFixed(2)} s\n`,
  );
  process.stdout.write(rows.join('\n') + '\n');
}

/** The seed-sized shape: four accounts with staggered resets, sessions scaled to `decisions` over 9.5 days. */
function seedShape(decisions: number): WorkloadShape {
  const perSession = 24; // mean turns of WEEK_SHAPE's sessions and bursts
  return {
    ...WEEK_SHAPE,
    seed: 42,
    days: 9.5,
    sessionsPerDay: Math.round(decisions / 9.5 / perSession),
    burstsPerDay: 20,
    throttlesPerDay: 20,
    accounts: ['a', 'b', 'c', 'd'].map((label, i) => ({
      label,
      fiveHourLimitTokens: 12_000_000,
      sevenDayLimitTokens: 300_000_000,
      sevenDayUsed: [0.5, 0.3, 0.2, 0.1][i],
      sevenDayResetInMs: (1 + 2 * i) * DAY,
    })),
  };
}

async function seedSizedLog(dir: string): Promise<void> {
  const file = path.join(dir, 'decisions.jsonl');
  const t0 = performance.now();
  const w = generateWorkload(seedShape(DECISIONS));
  const out = createWriteStream(file);
  const encoder = new DecisionLineEncoder();
  let pending: string[] = [];
  writeDecisionLog(w, { ...DEFAULT_POLICY, sessionAffinity: true }, (r) => {
    pending.push(encoder.encode(r));
    if (pending.length >= 1000) {
      out.write(pending.join('\n') + '\n');
      pending = [];
    }
  });
  out.end(pending.length ? pending.join('\n') + '\n' : '');
  await new Promise<void>((resolve, reject) => out.once('finish', resolve).once('error', reject));
  const mb = statSync(file).size / 1e6;
  process.stdout.write(
    `\na seed-sized log: ${fmt(w.requests.length)} decisions over 9.5 days on 4 accounts, ${mb.toFixed(0)} MB, generated in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
  );

  // The child reports its own peak RSS as it exits: VmHWM, which starts afresh at exec (ru_maxrss would
  // carry this parent's peak over the fork).
  const preload = path.join(dir, 'maxrss.cjs');
  writeFileSync(
    preload,
    "process.on('exit', () => { const c = process.cpuUsage(); process.stderr.write('maxrss_kb ' + /VmHWM:\\s+(\\d+)/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))[1] + ' cpu_ms ' + Math.round((c.user + c.system) / 1000) + '\\n'); });\n",
  );
  const args = ['-r', preload, CLI, 'simulate', file, ...SIX.flatMap((p) => ['--policy', p]), '--json'];
  const started = performance.now();
  const { code, stdout, stderr } = await run(process.execPath, args);
  const wallS = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`simulate exited ${code}: ${stderr}`);
  const rssMb = Number(/maxrss_kb (\d+)/.exec(stderr)?.[1] ?? NaN) / 1024;
  const cpuS = Number(/cpu_ms (\d+)/.exec(stderr)?.[1] ?? NaN) / 1000;
  const result = JSON.parse(stdout) as { wallMs: number; policies: unknown[]; calibration: { ok: boolean } };
  const verdict = wallS < TARGET_WALL_S && rssMb < TARGET_RSS_MB ? 'PASS' : 'FAIL';
  process.stdout.write(
    `simulated under ${result.policies.length} policies (+ the recorded one): process wall ${wallS.toFixed(1)} s (its own count: ${(result.wallMs / 1000).toFixed(1)} s, CPU ${cpuS.toFixed(1)} s), peak RSS ${rssMb.toFixed(0)} MB — ${verdict} (targets: < ${TARGET_WALL_S} s, < ${TARGET_RSS_MB} MB); calibration ${result.calibration.ok ? 'ok' : 'off'}\n`,
  );
}

function run(cmd: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function main(): Promise<void> {
  weekSpeed();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'whatif-bench-'));
  try {
    await seedSizedLog(dir);
  } finally {
    if (process.env.WHATIF_BENCH_KEEP === '1') process.stdout.write(`log kept in ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
