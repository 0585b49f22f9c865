/**
 * The `/status` report: the active policy, each account's state, bound
 * sessions, the configuration generation and counters. Built from the same
 * metrics the router uses. Contains labels and numbers only — never a token.
 */
import type { AccountMetrics } from '../../routing/metrics';
import type { CandidateVerdict } from '../../routing/plan';
import type { RoutingPolicy } from '../../routing/policy';
import type { QuotaWindow } from '../../quota/types';
import type { ConfigStatus, RuntimeConfig } from '../runtimeConfig';
import type { RouterCounters, RouterState } from '../state/routerState';

/** One window as reported: utilisation as a fraction, reset as ISO-8601. */
export interface WindowReport {
  used: number | null;
  status: string | null;
  resetsAt: string | null;
}

export interface AccountReport {
  label: string;
  kind: 'oauth' | 'api_key';
  fallback: boolean;
  enabled: boolean;
  primary: boolean;
  usable: boolean;
  unusableReason: string | null;
  inflight: number;
  coolingUntil: string | null;
  coolingReason: string | null;
  coolingWindows: string[] | null;
  session: WindowReport;
  weekly: WindowReport;
  scoped: Record<string, WindowReport>;
  /** min(1 − session, 1 − weekly), fraction; null when unknown. */
  headroom: number | null;
  sessionSaturated: boolean;
  evidence: { freshness: AccountMetrics['freshness']; observedAt: string | null; source: string | null };
  needsSignIn: boolean;
  needsSignInReason: string | null;
  boundSessions: number;
}

/** A live session binding. */
export interface SessionReport {
  /** The session's sticky-key hash (16 hex digits), never the raw id. */
  sessionId: string;
  account: string;
  lastServedAt: string;
  /** Time until the binding expires if the session stays idle, ms. */
  idleLeftMs: number;
}

/** How a new, unbound request would be routed now: the verdict for each account. */
export interface PreviewReport {
  selectionReason: string;
  verdicts: CandidateVerdict[];
}

export interface StatusReport {
  service: 'claude-router';
  uptimeS: number;
  policy: RoutingPolicy;
  config: { generation: number; loadedAt: string; lastReloadError: string | null; lastReloadErrorAt: string | null; sources: Record<string, string> };
  accounts: AccountReport[];
  usableAccounts: number;
  boundSessions: number;
  sessions: SessionReport[];
  preview: PreviewReport;
  inflight: number;
  counters: RouterCounters;
}

const iso = (ms: number | undefined | null) => (ms === undefined || ms === null || !Number.isFinite(ms) || ms <= 0 ? null : new Date(ms).toISOString());

function windowReport(w: QuotaWindow | undefined, used: number | null, resetMs: number): WindowReport {
  return { used, status: w?.status ?? null, resetsAt: iso(resetMs) };
}

export interface StatusInput {
  config: RuntimeConfig;
  configStatus: ConfigStatus;
  state: RouterState;
  metrics: Map<string, AccountMetrics>;
  now: number;
  startedAtMs: number;
  preview: PreviewReport;
}

export function buildStatus(input: StatusInput): StatusReport {
  const { config, state, metrics, now } = input;
  const live = state.affinity.live(now);
  const boundBy = new Map<string, number>();
  for (const b of live) boundBy.set(b.account, (boundBy.get(b.account) ?? 0) + 1);
  const accounts = config.accounts.map((a): AccountReport => {
    const m = metrics.get(a.label)!;
    const snap = state.snapshots.get(a.label);
    const cd = state.cooldowns.get(a.label);
    const cooling = cd && cd.untilMs > now ? cd : undefined;
    const scoped: Record<string, WindowReport> = {};
    for (const [family, w] of Object.entries(snap?.scoped ?? {})) {
      scoped[family] = { used: w.utilization ?? null, status: w.status ?? null, resetsAt: iso(w.resetAtMs) };
    }
    return {
      label: a.label,
      kind: a.kind,
      fallback: a.fallback,
      enabled: a.enabled,
      primary: config.policy.primaryAccount === a.label,
      usable: a.enabled && m.usable,
      unusableReason: !a.enabled ? 'disabled' : (m.unusableReason ?? null),
      inflight: state.leases.inflight(a.label),
      coolingUntil: iso(cooling?.untilMs),
      coolingReason: cooling?.reason ?? null,
      coolingWindows: cooling?.windows ?? null,
      session: windowReport(snap?.session, m.sessionUsed, m.sessionResetMs),
      weekly: windowReport(snap?.weekly, m.weeklyUsed, m.weeklyResetMs),
      scoped,
      headroom: m.headroom,
      sessionSaturated: m.sessionSaturated,
      evidence: { freshness: m.freshness, observedAt: iso(snap?.observedAtMs), source: snap?.source ?? null },
      needsSignIn: state.needsSignIn.has(a.label),
      needsSignInReason: state.needsSignIn.get(a.label) ?? null,
      boundSessions: boundBy.get(a.label) ?? 0,
    };
  });
  const cs = input.configStatus;
  return {
    service: 'claude-router',
    uptimeS: Math.round((now - input.startedAtMs) / 1000),
    policy: { ...config.policy },
    config: {
      generation: cs.generation,
      loadedAt: iso(cs.loadedAtMs)!,
      lastReloadError: cs.lastReloadError,
      lastReloadErrorAt: iso(cs.lastReloadErrorAtMs),
      sources: cs.sources,
    },
    accounts,
    usableAccounts: accounts.filter((a) => a.usable && !a.fallback).length,
    boundSessions: live.length,
    sessions: live.map((b) => ({
      sessionId: b.sessionId,
      account: b.account,
      lastServedAt: iso(b.lastServedAtMs)!,
      idleLeftMs: Math.max(0, b.lastServedAtMs + config.policy.sessionAffinityIdleTtlMs - now),
    })),
    preview: input.preview,
    inflight: state.leases.total(),
    counters: { ...state.counters },
  };
}
