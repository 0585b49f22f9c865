/**
 * The cost leases' report (estimation.ts) in words, for `claude-router estimation` and the status
 * panel: one line per model and per account. Pure.
 */
import type { AccountEstimationReport, EstimationReport, ModelEstimationReport } from './estimation';

const tokens = (n: number) => Math.round(n).toLocaleString('en-US');
const pct = (f: number) => `${Math.round(f * 100)} %`;

/** One model's estimate: `predicting · p95 420 tokens, leases 483 · 200 samples · 4 % beat it (of 100)`. */
export function modelEstimateText(m: ModelEstimationReport, minSamples: number): string {
  if (m.state === 'warming_up') return `warming up · ${m.samples} of ${minSamples} samples · leases max_tokens`;
  const beaten = `${pct(m.undershootRate)} beat it (of ${m.checked})`;
  if (m.state === 'undershoot') return `undershoot · p95 ${tokens(m.quantileTokens ?? 0)} tokens · ${beaten} · leases max_tokens until it recovers`;
  return `predicting · p95 ${tokens(m.quantileTokens ?? 0)} tokens, leases ${tokens(m.leaseTokens ?? 0)} · ${m.samples} samples · ${beaten}`;
}

/** One account's reservations: `2 in flight · input 0 · cache read 18,000 · cache write 2,000 · output 2,048`, or `nothing reserved`. */
export function reservedText(a: AccountEstimationReport): string {
  const r = a.reserved;
  if (a.inflight === 0 && r.inputTokens + r.cacheReadTokens + r.cacheWriteTokens + r.outputTokens === 0) return 'nothing reserved';
  return `${a.inflight} in flight · input ${tokens(r.inputTokens)} · cache read ${tokens(r.cacheReadTokens)} · cache write ${tokens(r.cacheWriteTokens)} · output ${tokens(r.outputTokens)}`;
}

/** The whole report as lines of text. */
export function estimationLines(e: EstimationReport): string[] {
  const lines = [
    `Output estimate: the p${Math.round(e.quantile * 100)} of each model's complete answers × ${e.margin}, never above a request's max_tokens; max_tokens until ${e.minSamples} samples, and while more than ${pct(e.maxUndershootRate)} beat it.`,
  ];
  const mw = Math.max(0, ...e.models.map((m) => m.model.length));
  for (const m of e.models) lines.push(`  ${m.model.padEnd(mw)}  ${modelEstimateText(m, e.minSamples)}`);
  if (e.models.length === 0) lines.push('  no complete answer yet: every request leases its max_tokens');
  lines.push('Reserved by the requests in flight (estimated tokens):');
  const aw = Math.max(0, ...e.accounts.map((a) => a.account.length));
  for (const a of e.accounts) lines.push(`  ${a.account.padEnd(aw)}  ${reservedText(a)}`);
  return lines;
}
