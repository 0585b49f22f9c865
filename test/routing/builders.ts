/**
 * Test builders for routing: realistic QuotaSnapshots, metrics computed through the real
 * `computeMetrics`, and planner accounts. Every time is relative to the fixed clock `NOW`.
 */
import { computeMetrics, type AccountMetrics, type MetricsParams } from '../../src/routing/metrics';
import type { PlanAccount, PlanInput } from '../../src/routing/plan';
import { DEFAULT_POLICY, type RoutingPolicy } from '../../src/routing/policy';
import type { Cooldown, OverageInfo, QuotaSnapshot, QuotaWindow, ScopedQuotaWindow } from '../../src/quota/types';

export const NOW = Date.UTC(2025, 10, 4, 12, 0, 0);
export const SEC = 1_000;
export const MIN = 60_000;
export const HOUR = 60 * MIN;
export const DAY = 24 * HOUR;
/** The staleness limit of snapshots and scoped windows (docs/routing.md#freshness). */
export const STALE = 15 * MIN;

/** One window: utilisation (fraction), status, reset as an offset from NOW (`resetIn`) or absolute (`resetAt`). */
export interface WinSpec {
  used?: number;
  status?: string;
  /** Reset at NOW + resetIn (ms). */
  resetIn?: number;
  /** Absolute reset, epoch ms (wins over resetIn; 0 means unknown). */
  resetAt?: number;
  /** Omit the utilisation field entirely. */
  noUsed?: boolean;
}

export interface SnapSpec {
  /** Age of the snapshot at NOW (ms); default 1 min. */
  age?: number;
  source?: 'headers' | 'usage';
  unified?: string;
  /** Unified reset as an offset from NOW. */
  unifiedResetIn?: number;
  /** The 5h window; `null` omits it. Default: allowed, 20 %, resets in 3 h. */
  s?: WinSpec | null;
  /** The 7d window; `null` omits it. Default: allowed, 30 %, resets in 4 days. */
  w?: WinSpec | null;
  /** Model-scoped windows by family, each with its own age (default: the snapshot's). */
  scoped?: Record<string, WinSpec & { age?: number }>;
  overage?: OverageInfo;
}

function win(spec: WinSpec, defaults: WinSpec): QuotaWindow {
  const merged = { ...defaults, ...spec };
  const out: QuotaWindow = {};
  if (merged.status !== undefined) out.status = merged.status;
  if (!merged.noUsed && merged.used !== undefined) out.utilization = merged.used;
  const reset = spec.resetAt !== undefined ? spec.resetAt : merged.resetIn !== undefined ? NOW + merged.resetIn : undefined;
  if (reset !== undefined) out.resetAtMs = reset;
  return out;
}

/** A snapshot as the header parser would store it, observed `age` ms before NOW. */
export function snap(spec: SnapSpec = {}): QuotaSnapshot {
  const observedAtMs = NOW - (spec.age ?? MIN);
  const out: QuotaSnapshot = { observedAtMs, source: spec.source ?? 'headers', scoped: {} };
  out.unifiedStatus = spec.unified ?? 'allowed';
  if (spec.unifiedResetIn !== undefined) out.unifiedResetAtMs = NOW + spec.unifiedResetIn;
  if (spec.s !== null) out.session = win(spec.s ?? {}, { status: 'allowed', used: 0.2, resetIn: 3 * HOUR });
  if (spec.w !== null) out.weekly = win(spec.w ?? {}, { status: 'allowed', used: 0.3, resetIn: 4 * DAY });
  for (const [family, w] of Object.entries(spec.scoped ?? {})) {
    const scoped: ScopedQuotaWindow = { ...win(w, { status: 'allowed', used: 0.1, resetIn: 5 * DAY }), observedAtMs: NOW - (w.age ?? spec.age ?? MIN) };
    out.scoped[family] = scoped;
  }
  if (spec.overage) out.overage = spec.overage;
  return out;
}

export interface MetricsOpts {
  now?: number;
  /** Session soft limit L. */
  L?: number;
  /** Reset-bucket width T. */
  T?: number;
  allowOverage?: boolean;
  family?: string;
  /** Cooldown until NOW + coolIn. */
  coolIn?: number;
  cooldown?: Cooldown;
  needsSignIn?: boolean;
}

export function params(o: MetricsOpts = {}): MetricsParams {
  return {
    sessionSoftLimit: o.L ?? DEFAULT_POLICY.sessionSoftLimit,
    sessionResetToleranceMs: o.T ?? DEFAULT_POLICY.sessionResetToleranceMs,
    allowOverage: o.allowOverage ?? false,
    modelFamily: o.family,
  };
}

export function cooldownFor(o: MetricsOpts): Cooldown | undefined {
  if (o.cooldown) return o.cooldown;
  if (o.coolIn === undefined) return undefined;
  return { untilMs: NOW + o.coolIn, reason: 'throttle', setAtMs: NOW - SEC };
}

/** Metrics of one account through the real computeMetrics. */
export function metricsOf(snapshot: QuotaSnapshot | undefined, o: MetricsOpts = {}): AccountMetrics {
  return computeMetrics({ snapshot, cooldown: cooldownFor(o), needsSignIn: o.needsSignIn }, params(o), o.now ?? NOW);
}

export interface AcctSpec extends MetricsOpts {
  /** The snapshot; `null` = no snapshot. Default: a fresh default snapshot. */
  snap?: QuotaSnapshot | null;
  primary?: boolean;
  fallback?: boolean;
  inflight?: number;
}

/** A planner account (also a RankCandidate) with metrics from computeMetrics. */
export function acct(id: string, index: number, spec: AcctSpec = {}): PlanAccount {
  const snapshot = spec.snap === null ? undefined : (spec.snap ?? snap());
  return {
    id,
    index,
    isPrimary: spec.primary ?? false,
    fallback: spec.fallback ?? false,
    inflight: spec.inflight ?? 0,
    metrics: metricsOf(snapshot, spec),
  };
}

/** A plan input with the default policy overridden by `policy`. */
export function planInput(accounts: PlanAccount[], policy: Partial<RoutingPolicy> = {}, rest: Partial<Omit<PlanInput, 'accounts' | 'policy'>> = {}): PlanInput {
  return {
    accounts,
    policy: { ...DEFAULT_POLICY, ...policy },
    sessionId: rest.sessionId === undefined ? 'sess-1' : rest.sessionId,
    binding: rest.binding,
    roundRobinCursor: rest.roundRobinCursor ?? 0,
  };
}

export const ids = (xs: readonly { id: string }[]): string[] => xs.map((x) => x.id);
