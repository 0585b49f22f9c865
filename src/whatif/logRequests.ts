/**
 * What the requests read from a decision log say, one by one and taken together: each request's
 * compact entry ({@link RawRequest}) and its usage as recorded, and the estimates reconstruct.ts
 * draws from all of them — the median usage, the prompt-cache lifetime, each session's state at its
 * first request, each window's state at the start. Pure. The rules: docs/whatif.md#reconstruction.
 */
import type { UsageRecord } from '../routing/decision';
import type { WindowPeriod } from '../routing/weeklyResets';
import { chargedTokens } from '../sim/windows';
import type { ServedTokens } from './allowance';
import type { SessionStart, WindowStart } from './workload';

/** The prompt-cache lifetime assumed unless the log shows a longer one: Anthropic's default, 5 min in ms (docs/anthropic-api.md). */
export const DEFAULT_CACHE_TTL_MS = 5 * 60_000;
/** The longer lifetime Claude Code asks for in subscription mode: 1 h in ms (docs/claude-code-client.md). */
export const LONG_CACHE_TTL_MS = 60 * 60_000;

/** One request as read, before the log is complete. */
export interface RawRequest {
  atMs: number;
  requestId: string;
  session: string | null;
  model: string | null;
  stream: boolean;
  usage: UsageRecord | null;
  servedBy: string | null;
  servedByFallback: boolean;
  durationMs: number;
  /** When the serving answer's head (and its quota headers) arrived, epoch ms. */
  visibleAtMs: number;
  policyIndex: number;
  /** The session's bound account when it was planned. */
  boundAccount: string | null;
  /** Not a conversation turn (class `auxiliary` or `compaction`; an older line without a class is a turn): it never binds. */
  auxiliary: boolean;
}

/** A recorded usage with every count a non-negative number, or null when there is none. */
export function usageOf(u: UsageRecord | null | undefined): UsageRecord | null {
  if (!u || typeof u !== 'object') return null;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);
  return {
    inputTokens: n(u.inputTokens),
    outputTokens: n(u.outputTokens),
    cacheCreationInputTokens: n(u.cacheCreationInputTokens),
    cacheReadInputTokens: n(u.cacheReadInputTokens),
  };
}

/** Tokens a served answer counts in its windows (the world model's rule, src/sim/windows.ts). */
export function charged(u: UsageRecord): number {
  return chargedTokens({
    input_tokens: u.inputTokens,
    cache_creation_input_tokens: u.cacheCreationInputTokens,
    cache_read_input_tokens: u.cacheReadInputTokens,
    output_tokens: u.outputTokens,
  });
}

/**
 * A window's state at `startMs`: its earliest observed period, less what the account served
 * between `startMs` and that observation. A period that began after `startMs` says nothing of the
 * window at the start: it starts empty, at the account's first served request.
 */
export function windowStart(periods: readonly WindowPeriod[], served: ServedTokens, startMs: number, durationMs: number, limitTokens: number): WindowStart {
  const first = periods.reduce<WindowPeriod | undefined>((best, p) => (best === undefined || p.first.atMs < best.first.atMs ? p : best), undefined);
  if (!first || first.resetAtMs - durationMs > startMs) return { used: 0, resetAtMs: null };
  const before = served.between(startMs, first.first.atMs) / limitTokens;
  return { used: Math.max(0, first.first.used - before), resetAtMs: first.resetAtMs };
}

/** The median of the defined numbers, or undefined when there is none. */
export function medianOf(values: ReadonlyArray<number | undefined>): number | undefined {
  const v = Float64Array.from(values.filter((x): x is number => x !== undefined)).sort();
  if (v.length === 0) return undefined;
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
}

/** The median of each usage field over the requests that recorded one (zeros when none did). */
export function medianUsage(raw: readonly RawRequest[]): UsageRecord {
  const with_ = raw.filter((r) => r.usage !== null).map((r) => r.usage!);
  const m = (f: (u: UsageRecord) => number) => Math.round(medianOf(with_.map(f)) ?? 0);
  return {
    inputTokens: m((u) => u.inputTokens),
    outputTokens: m((u) => u.outputTokens),
    cacheCreationInputTokens: m((u) => u.cacheCreationInputTokens),
    cacheReadInputTokens: m((u) => u.cacheReadInputTokens),
  };
}

/**
 * The prompt-cache lifetime: 1 h when a session read its cache on the same account after a pause
 * longer than 5 min (only a 1-hour prefix survives that), else 5 min.
 */
export function cacheTtl(raw: readonly RawRequest[]): { ttlMs: number; evidence: string } {
  const last = new Map<string, { account: string; atMs: number }>();
  let longest = 0;
  for (const r of raw) {
    if (!r.session || !r.servedBy || !r.usage) continue;
    const prev = last.get(r.session);
    if (prev && prev.account === r.servedBy && r.usage.cacheReadInputTokens > 0) longest = Math.max(longest, r.atMs - prev.atMs);
    last.set(r.session, { account: r.servedBy, atMs: r.atMs });
  }
  if (longest > DEFAULT_CACHE_TTL_MS) return { ttlMs: LONG_CACHE_TTL_MS, evidence: `1 h: a session read its cache after a ${Math.round(longest / 60_000)}-minute pause` };
  return { ttlMs: DEFAULT_CACHE_TTL_MS, evidence: '5 min: no cache read after a longer pause' };
}

/** Each session's state at its first logged request: its warm prefix there, its binding. */
export function sessionStarts(raw: readonly RawRequest[]): SessionStart[] {
  const seen = new Set<string>();
  const out: SessionStart[] = [];
  for (const r of raw) {
    if (!r.session || seen.has(r.session)) continue;
    seen.add(r.session);
    const cached = r.usage && r.servedBy && !r.servedByFallback ? r.usage.cacheReadInputTokens : 0;
    if (cached > 0) out.push({ session: r.session, account: r.servedBy!, cachedTokens: cached, bound: r.boundAccount === r.servedBy, atMs: r.atMs });
    else if (r.boundAccount) out.push({ session: r.session, account: r.boundAccount, cachedTokens: 0, bound: true, atMs: r.atMs });
  }
  return out;
}
