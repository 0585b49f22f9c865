/**
 * What `claude-router simulate` prints: one result object (its `--json`) and its text — a line
 * per policy with the seed's rollout metrics side by side, the calibration of the log's own policy,
 * and the limits of the model. Pure. How to read it: docs/whatif.md#reading-the-table.
 */
import type { PolicyReport } from '../routing/report';
import { fitTable, wrapLines } from '../routing/textFit';
import { refusedOf, toleranceText, type Calibration, type Comparison } from './compare';
import type { Reconstruction, ReconstructStats } from './reconstruct';
import type { AllowanceSource, WindowStart } from './workload';

/** One account as the simulation modelled it. */
export interface AccountOutput {
  label: string;
  fallback: boolean;
  /** Tokens that fill its 5-hour and weekly windows. */
  fiveHourAllowanceTokens: number;
  sevenDayAllowanceTokens: number;
  allowance: AllowanceSource;
  /** Window periods the allowance was inferred from. */
  allowanceEvidence: number;
  /** Its windows when the log begins (utilisation fraction, reset epoch ms or null). */
  start: { fiveHour: WindowStart; sevenDay: WindowStart };
}

/** One policy's line. */
export interface PolicyOutput {
  name: string;
  description: string;
  recorded: boolean;
  report: PolicyReport;
  /** Requests that found no usable account. */
  refused: number;
  /** Allowance that expired unused at the weekly resets, tokens. */
  unusedWeeklyAllowanceTokens: number;
}

/** The result of `claude-router simulate` (`--json` prints it). */
export interface SimulationOutput {
  /** First arrival and last answer's end, epoch ms, and the span in days. */
  span: { startMs: number; endMs: number; days: number };
  stats: ReconstructStats;
  sessions: number;
  accounts: AccountOutput[];
  cacheTtlMs: number;
  cacheTtlEvidence: string;
  /** What the log shows happened, over its `/v1/messages` decisions. */
  actual: PolicyReport;
  /** The log's own policy replayed. */
  recorded: PolicyOutput;
  policies: PolicyOutput[];
  calibration: Calibration;
  /** What the model assumes; printed with the results. */
  limits: string[];
  /** Wall-clock time of reading and replaying, ms (set by the caller, who owns the clock). */
  wallMs: number;
}

const DAY_MS = 86_400_000;

function policyOutput(p: Comparison['recorded']): PolicyOutput {
  let unused = 0;
  for (const r of p.report.weeklyResets) unused += r.unusedTokens ?? 0;
  return { name: p.name, description: p.description, recorded: p.recorded, report: p.report, refused: refusedOf(p.report), unusedWeeklyAllowanceTokens: unused };
}

/** The result object of a comparison over a reconstruction. */
export function simulationOutput(rec: Reconstruction, cmp: Comparison, wallMs: number): SimulationOutput {
  const w = rec.workload;
  const accounts = w.accounts.map((a): AccountOutput => ({
    label: a.label,
    fallback: a.fallback,
    fiveHourAllowanceTokens: a.fiveHourLimitTokens,
    sevenDayAllowanceTokens: a.sevenDayLimitTokens,
    allowance: a.allowanceSource,
    allowanceEvidence: a.allowanceEvidence,
    start: { fiveHour: a.fiveHour, sevenDay: a.sevenDay },
  }));
  return {
    span: { startMs: w.startMs, endMs: w.endMs, days: (w.endMs - w.startMs) / DAY_MS },
    stats: rec.stats,
    sessions: rec.actual.sessions,
    accounts,
    cacheTtlMs: w.cacheTtlMs,
    cacheTtlEvidence: w.cacheTtlEvidence,
    actual: rec.actual,
    recorded: policyOutput(cmp.recorded),
    policies: cmp.results.map(policyOutput),
    calibration: cmp.calibration,
    limits: limits(rec),
    wallMs,
  };
}

/** The model's assumptions for this log, one sentence each. */
function limits(rec: Reconstruction): string[] {
  const w = rec.workload;
  const assumed = w.accounts.filter((a) => a.allowanceSource === 'assumed').map((a) => a.label);
  const out = [
    'Every policy sees the same arrivals: a refused request is not retried later, and no session changes its pace.',
    assumed.length
      ? `Allowances are inferred from how utilisation moved against served tokens; ${assumed.join(', ')} showed too little and got the others' median (or the fake upstream's size).`
      : 'Allowances are inferred from how utilisation moved against served tokens (use from outside the router makes them smaller).',
    `Prompt cache: per session and account, ${w.cacheTtlEvidence}; prefixes shared between sessions are not modelled.`,
    "The router's quota evidence is taken as exact and current; model-scoped windows and overage are not simulated.",
    'Requests are placed as they arrive: the admission ramp after a move, the waits for room and the blip waits are not simulated.',
  ];
  if (rec.stats.faults) out.push(`${rec.stats.faults} transient failures (throttles, overloads, server errors) are replayed on the same account at the same time.`);
  if (rec.stats.usageEstimated === rec.stats.requests) out.push('WARNING: no request of the log recorded its token usage: every token figure is 0 and no window fills.');
  else if (rec.stats.usageEstimated) out.push(`${rec.stats.usageEstimated} requests without recorded usage took their session's neighbouring request's tokens.`);
  return out;
}

const num = (n: number) => Math.round(n).toLocaleString('en-US');
const pct = (f: number) => `${(f * 100).toFixed(1)}%`;

/** Tokens in a short form: 1,234 → 1.2k, 20,000,000 → 20.0M. */
function tokens(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(Math.round(n));
}

const COLUMNS = ['switches/1k', 'switches', 'ping-pong', 'cache writes', 'on switches', '≤1 usable', '≥2 usable h', 'fallback', 'refused', 'unused at weekly resets'];

function cells(r: PolicyReport, unusedTokens: number | null): string[] {
  const resets = r.weeklyResets.length;
  const unused = resets === 0 ? '–' : `${r.weeklyResetsWithUnused}/${resets}, ${r.unusedWeeklyAllowance.toFixed(2)} wk${unusedTokens === null ? '' : ` (${tokens(unusedTokens)})`}`;
  return [
    r.switchesPer1000SessionRequests.toFixed(1),
    num(r.midSessionSwitches),
    num(r.pingPongPairs),
    num(r.cacheCreationTokens),
    num(r.switchCacheCreationTokens),
    pct(r.shareTimeAtMostOneUsable),
    r.hoursAtLeastTwoUsable.toFixed(1),
    pct(r.fallbackShare),
    num(refusedOf(r)),
    unused,
  ];
}

/** Rows of cells → aligned lines no wider than `width` where it can (the first column left-aligned, the others right-aligned; see fitTable). */
function table(rows: string[][], width: number): string[] {
  return fitTable(rows, width, { right: new Set(rows[0].map((_, i) => i).filter((i) => i > 0)) });
}

function calibrationLines(c: Calibration, recordedName: string): string[] {
  const figures = c.figures.map(
    (f) => `${f.metric} ${num(f.simulated)} vs ${num(f.actual)}${f.error === null ? '' : ` (${f.error >= 0 ? '+' : ''}${(f.error * 100).toFixed(1)}%)`}`,
  );
  const verdict = c.ok
    ? `within ${toleranceText('or')} of what happened`
    : `WARNING: ${c.figures
        .filter((f) => !f.within)
        .map((f) => f.metric)
        .join(', ')} off by more than ${toleranceText('and')} — the reconstruction is too far off to trust these results`;
  return [`calibration (${recordedName} replayed vs the log): ${figures.join(', ')} — ${verdict}.`];
}

/**
 * The result as text.
 * @param width the columns to fit (the terminal's; 80 off a terminal): the table is split into blocks of
 * columns, long lines wrapped. Default: no limit.
 */
export function formatSimulation(o: SimulationOutput, width = Infinity): string {
  const start = new Date(o.span.startMs).toISOString().slice(0, 16).replace('T', ' ');
  const end = new Date(o.span.endMs).toISOString().slice(0, 16).replace('T', ' ');
  const accountText = o.accounts.map((a) =>
    a.fallback
      ? `${a.label} (fallback)`
      : `${a.label} 5h ${tokens(a.fiveHourAllowanceTokens)} / 7d ${tokens(a.sevenDayAllowanceTokens)} tokens (${a.allowance === 'inferred' ? `inferred from ${a.allowanceEvidence} windows` : a.allowance})`,
  );
  const rows: string[][] = [
    ['policy', ...COLUMNS],
    ['actual (the log)', ...cells(o.actual, null)],
  ];
  const recordedListed = o.policies.some((p) => p.recorded);
  if (!recordedListed) rows.push([`* ${o.recorded.name} (recorded, replayed)`, ...cells(o.recorded.report, o.recorded.unusedWeeklyAllowanceTokens)]);
  for (const p of o.policies) rows.push([`${p.recorded ? '*' : ' '} ${p.name}${p.recorded ? ' (recorded)' : ''}`, ...cells(p.report, p.unusedWeeklyAllowanceTokens)]);
  const lines = [
    `what-if: ${num(o.stats.requests)} requests (${num(o.sessions)} sessions), ${start} – ${end} UTC (${o.span.days.toFixed(1)} days)`,
    `accounts: ${accountText.join('; ')}`,
    `recorded policy: ${o.recorded.description}`,
    '',
    ...table(rows, width),
    '',
    ...calibrationLines(o.calibration, o.recorded.name),
    '',
    'limits:',
    ...o.limits.map((l) => `  - ${l}`),
    '',
    `replayed ${num(o.stats.requests)} requests under ${o.policies.length + (recordedListed ? 0 : 1)} policies in ${(o.wallMs / 1000).toFixed(2)} s`,
  ];
  return wrapLines(lines, width).join('\n') + '\n';
}
