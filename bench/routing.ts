/**
 * Routing decision cost: the pure `src/routing` code one request runs — computeMetrics for every
 * account, the session's binding from a SessionAffinityStore with live bindings, planRoute, and
 * the bind on commit — as the engine calls it (src/proxy/engine.ts `plan`, `bindOnCommit`), at
 * 2, 10, 50 and 200 accounts, under the default strategy (fill-first) or any strategy of the
 * catalogue (`--strategies` runs every one). No I/O, no HTTP.
 *
 * Accounts have varied, realistic quota evidence: fresh header snapshots with different
 * utilisations and resets (so expiry-first walks several comparator steps), scoped `sonnet`
 * windows on half of them, a few soft-saturated, cooling down, without evidence, or needing
 * sign-in. Sessions: 80 % of decisions reuse one of 1 000 bound sessions, 20 % are new sessions
 * (the store fills to its capacity and evicts, as in a long-running proxy).
 *
 *   node out/bench/routing.js [--quick] [--strategies]     (run.ts forks it and receives the rows over IPC)
 *   BENCH_SIZES=10,50 picks the account counts; BENCH_STRATEGIES=fill-first,forecast picks strategies; BENCH_CPU=1
 *   times samples by the process's CPU time instead of wall time (a shared machine); BENCH_MODIFIERS=1 turns on the sticky thresholds and prefer-earlier-reset.
 */
import { performance } from 'node:perf_hooks';
import { computeMetrics, type MetricsInput, type MetricsParams } from '../src/routing/metrics';
import { planRoute, type PlanAccount } from '../src/routing/plan';
import { SessionAffinityStore } from '../src/routing/affinity';
import { DEFAULT_POLICY, type RoutingPolicy } from '../src/routing/policy';
import { STRATEGY_NAMES, strategyFor } from '../src/routing/planner/strategies/registry';
import { SessionWork } from '../src/routing/sessionWork';
import type { AccountLearnedCosts } from '../src/quota/learnedCosts';
import type { QuotaSnapshot } from '../src/quota/types';
import { median, prng } from './common';

export interface RoutingRow {
  /** The strategy measured. */
  strategy: string;
  accounts: number;
  /** Median over samples, µs per decision. */
  usPerDecision: number;
  /** Fastest and slowest sample, µs per decision. */
  minUs: number;
  maxUs: number;
  decisionsPerSample: number;
  samples: number;
}

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

function accountInputs(n: number, now: number): MetricsInput[] {
  const rand = prng(1000 + n);
  return Array.from({ length: n }, (_, i): MetricsInput => {
    if (n > 2 && i % 17 === 5) return { snapshot: undefined, cooldown: undefined }; // no evidence yet
    if (n > 2 && i % 23 === 7) return { snapshot: undefined, cooldown: undefined, needsSignIn: true };
    const observedAtMs = now - Math.floor(rand() * 10 * MIN);
    const sessionUsed = i % 11 === 3 ? 0.985 : Math.round(rand() * 90) / 100; // some soft-saturated
    const snapshot: QuotaSnapshot = {
      observedAtMs,
      source: 'headers',
      unifiedStatus: 'allowed',
      unifiedResetAtMs: now + Math.floor(rand() * 5 * HOUR),
      representativeClaim: 'five_hour',
      // Resets in a few distinct buckets so ties occur and later comparator steps run.
      session: { status: sessionUsed > 0.9 ? 'allowed_warning' : 'allowed', utilization: sessionUsed, resetAtMs: now + (1 + Math.floor(rand() * 4)) * HOUR },
      weekly: { status: 'allowed', utilization: Math.round(rand() * 80) / 100, resetAtMs: now + (1 + Math.floor(rand() * 3)) * DAY },
      scoped: {},
    };
    if (i % 2 === 0) snapshot.scoped.sonnet = { status: 'allowed', utilization: Math.round(rand() * 60) / 100, resetAtMs: now + 5 * DAY, observedAtMs };
    const cooldown = n > 2 && i % 13 === 9 ? { untilMs: now + 10 * MIN, reason: 'throttle' as const, setAtMs: now - MIN } : undefined;
    return { snapshot, cooldown };
  });
}

/** Runs `decisions` routing decisions over `n` accounts; returns a checksum so nothing is optimised away. */
function makeDecider(n: number, strategy: string) {
  const t0 = Date.UTC(2025, 10, 4, 12, 0, 0);
  const inputs = accountInputs(n, t0);
  const labels = inputs.map((_, i) => `account-${i + 1}`);
  const inflight = inputs.map((_, i) => i % 4);
  // BENCH_MODIFIERS=1 also turns on the sticky thresholds and prefer-earlier-reset (off by default).
  const modifiers = process.env.BENCH_MODIFIERS === '1' ? { stickyThreshold5h: 90, stickyThreshold7d: 70, preferEarlierReset: true } : {};
  const policy: RoutingPolicy = Object.freeze({ ...DEFAULT_POLICY, sessionAffinity: true, strategy, ...modifiers });
  const params: MetricsParams = {
    sessionSoftLimit: policy.sessionSoftLimit,
    sessionResetToleranceMs: policy.sessionResetToleranceMs,
    allowOverage: policy.allowOverage,
    modelFamily: 'sonnet',
  };
  const store = new SessionAffinityStore(policy.sessionAffinityIdleTtlMs);
  const rand = prng(42 + n);
  const sessions = Array.from({ length: 1_000 }, (_, i) => `5b2c${i.toString(16).padStart(4, '0')}-1f0a-4e4e-9c1d-1234567890ab`);
  // Live bindings to start with: every known session bound to some usable account.
  for (const s of sessions) store.bind(s, labels[Math.floor(rand() * n)], t0 - Math.floor(rand() * 30 * MIN));
  // forecast's inputs, kept as the router state keeps them: bound work (incremental), learned costs, reservations of the requests in flight.
  const forecasting = strategyFor(strategy).readsForecast === true;
  const work = new SessionWork(policy.sessionAffinityIdleTtlMs);
  for (const s of sessions) work.served(s, store.get(s, t0)!.account, 5_000 + Math.floor(rand() * 30_000), t0 - Math.floor(rand() * 30 * MIN));
  const learned: AccountLearnedCosts[] = labels.map((_, i) => ({
    fiveHour: { fractionPerToken: 1 / (1_000_000 * (1 + (i % 5))), confidence: 0.9, samples: 40 },
    sevenDay: { fractionPerToken: 1 / (10_000_000 * (1 + (i % 5))), confidence: 0.8, samples: 30 },
  }));
  const reserved = inflight.map((f) => (f === 0 ? undefined : { inputTokens: 2_000 * f, cacheReadTokens: 40_000 * f, cacheWriteTokens: 3_000 * f, outputTokens: 1_500 * f }));
  let k = 0;
  return (decisions: number): number => {
    let check = 0;
    for (let d = 0; d < decisions; d++, k++) {
      const now = t0 + (k % 600_000); // time moves, within the idle TTL and the snapshots' freshness
      const accounts: PlanAccount[] = new Array(n);
      for (let i = 0; i < n; i++) {
        accounts[i] = {
          id: labels[i],
          index: i,
          isPrimary: false,
          fallback: false,
          inflight: inflight[i],
          metrics: computeMetrics(inputs[i], params, now),
          priority: i % 3,
          costTier: 1 + (i % 2),
        };
        if (forecasting) {
          accounts[i].learnedCosts = learned[i];
          accounts[i].reserved = reserved[i];
          accounts[i].boundWork = work.accountWork(labels[i], now); // a new object, as the engine reads it
        }
      }
      const sessionId = k % 5 === 4 ? `new-session-${k}` : sessions[(k * 7919) % sessions.length];
      const binding = store.get(sessionId, now);
      const forecastInput = forecasting ? { sessionTokensPerMs: work.expectedRate(sessionId), sessionHorizonMs: work.expectedLifeMs() } : {};
      const plan = planRoute({ accounts, policy, sessionId, binding, roundRobinCursor: k, requestId: `req_${k}`, nowMs: now, ...forecastInput });
      const served = plan.order[0];
      if (served && served.metrics.usable) {
        store.bind(sessionId, served.id, now);
        if (forecasting) work.served(sessionId, served.id, 20_000, now);
      }
      check += plan.order.length + plan.verdicts.length;
    }
    return check;
  };
}

export function runRoutingBench(opts: { quick: boolean; sizes?: number[]; strategies?: readonly string[] }): RoutingRow[] {
  const sizes = opts.sizes ?? [2, 10, 50, 200];
  const rows: RoutingRow[] = [];
  for (const strategy of opts.strategies ?? ['fill-first']) rows.push(...runOne(opts.quick, sizes, strategy));
  return rows;
}

/**
 * The clock a sample is timed by, ms: wall time, or with BENCH_CPU=1 the process's CPU time (user +
 * system, all threads): on a shared machine another process's load stretches wall time, far less CPU time.
 */
const clock: () => number =
  process.env.BENCH_CPU === '1'
    ? () => {
        const u = process.cpuUsage();
        return (u.user + u.system) / 1000;
      }
    : () => performance.now();

function runOne(quick: boolean, sizes: number[], strategy: string): RoutingRow[] {
  const sampleMs = quick ? 60 : 200;
  const samples = quick ? 5 : 9;
  const rows: RoutingRow[] = [];
  let sink = 0;
  for (const n of sizes) {
    const decide = makeDecider(n, strategy);
    // Warm up (JIT) and size a sample to about sampleMs.
    let batch = 16;
    const fixed = Number(process.env.BENCH_FIXED ?? 0);
    if (fixed > 0) {
      // A fixed number of decisions (for instruction counts: run twice with different counts and subtract).
      sink += decide(fixed);
      rows.push({ strategy, accounts: n, usPerDecision: 0, minUs: 0, maxUs: 0, decisionsPerSample: fixed, samples: 1 });
      continue;
    }
    for (;;) {
      const t = clock();
      sink += decide(batch);
      const ms = clock() - t;
      if (ms >= sampleMs / 4 || batch >= 1 << 22) {
        batch = Math.max(16, Math.round((batch * sampleMs) / Math.max(ms, 0.001)));
        break;
      }
      batch *= 2;
    }
    sink += decide(batch); // one more warm sample at full size
    const us: number[] = [];
    for (let s = 0; s < samples; s++) {
      const t = clock();
      sink += decide(batch);
      us.push(((clock() - t) * 1000) / batch);
    }
    rows.push({ strategy, accounts: n, usPerDecision: median(us), minUs: Math.min(...us), maxUs: Math.max(...us), decisionsPerSample: batch, samples });
  }
  if (sink === -1) process.stdout.write('');
  return rows;
}

/** Growth between consecutive sizes, measured against n·log2 n. */
export function growth(rows: RoutingRow[]): Array<{ strategy: string; from: number; to: number; measured: number; nlogn: number }> {
  const nlogn = (n: number) => n * Math.log2(Math.max(2, n));
  const out = [];
  for (let i = 1; i < rows.length; i++) {
    const a = rows[i - 1];
    const b = rows[i];
    if (a.strategy !== b.strategy) continue;
    out.push({ strategy: a.strategy, from: a.accounts, to: b.accounts, measured: b.usPerDecision / a.usPerDecision, nlogn: nlogn(b.accounts) / nlogn(a.accounts) });
  }
  return out;
}

export function formatRoutingTable(rows: RoutingRow[]): string {
  const lines = ['accounts   µs/decision (median)   min–max µs      µs per account   decisions/sample × samples'];
  const several = rows.some((r) => r.strategy !== rows[0].strategy);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    if (several && (i === 0 || rows[i - 1].strategy !== r.strategy)) lines.push(`-- ${r.strategy}`);
    lines.push(
      `${String(r.accounts).padStart(8)}   ${r.usPerDecision.toFixed(2).padStart(20)}   ${`${r.minUs.toFixed(2)}–${r.maxUs.toFixed(2)}`.padStart(12)}   ${(r.usPerDecision / r.accounts).toFixed(3).padStart(14)}   ${r.decisionsPerSample} × ${r.samples}`,
    );
  }
  for (const g of growth(rows)) lines.push(`growth ${g.strategy} ${g.from} → ${g.to} accounts: ×${g.measured.toFixed(2)} (n·log n would be ×${g.nlogn.toFixed(2)})`);
  return lines.join('\n');
}

/** `--strategies` or BENCH_STRATEGIES=1: the whole catalogue; BENCH_STRATEGIES=a,b: those (fill-first first, the ratios' reference); else fill-first. */
function strategiesOf(all: boolean, env: string | undefined): readonly string[] | undefined {
  if (all || env === '1') return STRATEGY_NAMES;
  if (!env) return undefined;
  const names = env.split(',').filter((s) => s.length > 0);
  for (const n of names) if (!(STRATEGY_NAMES as readonly string[]).includes(n)) throw new Error(`BENCH_STRATEGIES: unknown strategy ${n}`);
  return names;
}

// Entry point only when run as out/bench/routing.js (run.ts bundles this module too).
if (/routing\.js$/.test(process.argv[1] ?? '')) {
  const rows = runRoutingBench({
    quick: process.argv.includes('--quick') || process.env.BENCH_QUICK === '1',
    strategies: strategiesOf(process.argv.includes('--strategies'), process.env.BENCH_STRATEGIES),
    sizes: process.env.BENCH_SIZES ? process.env.BENCH_SIZES.split(',').map(Number) : undefined,
  });
  if (process.send) process.send({ type: 'routing', rows });
  else process.stdout.write(formatRoutingTable(rows) + '\n');
}
