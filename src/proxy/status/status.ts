/**
 * The `/status` report: the active policy, each account's state, bound
 * sessions, the configuration generation and counters. Built from the same
 * metrics the router uses. Contains labels and numbers only — never a token.
 */
import { isoTime } from '../../quota/time';
import { grantAgeDays, grantWarns } from '../../accounts/grant';
import type { AccountOrigin } from '../../accounts/types';
import type { AccountMetrics } from '../../routing/metrics';
import type { CandidateVerdict } from '../../routing/plan';
import type { FilterVerdict } from '../../routing/planner/verdict';
import type { RoutingPolicy } from '../../routing/policy';
import type { QuotaWindow } from '../../quota/types';
import { recoveriesByTime } from '../../routing/recovery';
import type { ConfigStatus, RuntimeConfig } from '../runtimeConfig';
import { admissionQueue, rampWindow } from '../state/concurrency';
import type { RouterCounters, RouterState } from '../state/routerState';
import { buildEstimation, type EstimationReport } from './estimation';
import type { StoreStatus } from '../../store/connection';

/** One window as reported: utilisation as a fraction, reset as ISO-8601. */
export interface WindowReport {
  used: number | null;
  status: string | null;
  resetsAt: string | null;
}

/**
 * An account's displayed status: its own state, the same whatever request comes next (the first
 * that holds, in this order):
 * - `Disabled`: switched off in the account list;
 * - `Needs sign-in`: its credentials were refused or are missing;
 * - `Limited`: a usage window is exhausted — the 5-hour, weekly or unified window at 100 % or
 *   rejected by the upstream, or a cooldown set because a window ran out (it clears at the reset);
 * - `Paused`: cooling down for another reason (throttled, overloaded, server errors, forbidden);
 * - `Active`: otherwise. An Active account can still be ineligible for a given request (at the
 *   5-hour soft limit, at its in-flight cap, or a model's weekly window exhausted): that is its
 *   eligibility, a separate verdict.
 */
export type AccountStatus = 'Active' | 'Limited' | 'Paused' | 'Needs sign-in' | 'Disabled';

/** The facts {@link accountStatus} reads. */
export interface AccountStatusFacts {
  enabled: boolean;
  needsSignIn: boolean;
  /** A 5-hour, weekly or unified window exhausted (AccountMetrics.hardSaturated). */
  windowExhausted: boolean;
  /** The reason of the cooldown in force, or undefined when none is. */
  coolingReason: string | undefined;
}

/** The displayed status of an account (see {@link AccountStatus}). */
export function accountStatus(f: AccountStatusFacts): AccountStatus {
  if (!f.enabled) return 'Disabled';
  if (f.needsSignIn) return 'Needs sign-in';
  if (f.windowExhausted || f.coolingReason === 'window_exhausted') return 'Limited';
  if (f.coolingReason !== undefined) return 'Paused';
  return 'Active';
}

export interface AccountReport {
  label: string;
  /** The displayed status, independent of any request. */
  status: AccountStatus;
  /**
   * Eligibility for a typical new request (unbound, no model known): the filter's verdict in the
   * preview, `disabled` for a disabled account, null for an account the strategy does not consider
   * at all (a fallback account under `single-account`). Words: `eligibilityText` (statusView.ts),
   * which is `verdictText` (routing/planner/verdict.ts).
   */
  eligibility: FilterVerdict | null;
  kind: 'oauth' | 'api_key';
  fallback: boolean;
  enabled: boolean;
  primary: boolean;
  usable: boolean;
  unusableReason: string | null;
  inflight: number;
  /** The concurrency limit learned from the account's concurrency throttles (requests at once), null when none holds (docs/routing.md#concurrency-limits). */
  concurrencyLimit: number | null;
  /** While the account ramps up after a move: how many requests may await their first answer at once; null when it is not ramping (docs/routing.md#admission-ramp). */
  rampWindow: number | null;
  /** Requests waiting in the account's queue for room on it. */
  queued: number;
  coolingUntil: string | null;
  coolingReason: string | null;
  coolingWindows: string[] | null;
  /** Model-scoped cooldowns still running, by model family: when each ends, ISO-8601. */
  scopedCoolingUntil: Record<string, string>;
  /**
   * The account's re-check by one real request (docs/routing.md#recovery-probes): `due` — its
   * cooldown's windows read recovered and the next new request tries it; `probing` — that request
   * is on its way; `backing_off` — a re-check failed, the next no earlier than `nextAt` (ISO-8601).
   * Null when none is pending.
   */
  recheck: { state: 'due' | 'probing' | 'backing_off'; failures: number; nextAt: string | null } | null;
  /**
   * The limit warm-up (docs/routing.md#limit-warm-up): `enabled` — the account opted in
   * (`warm-up: true`); `last` — its last warm-up: when (ISO-8601), the model, the window whose
   * reset it followed (`5h` | `7d`), whether the account answered 2xx, and the status (0: no answer).
   */
  warmUp: { enabled: boolean; last: { at: string; model: string; window: string; ok: boolean; status: number } | null };
  session: WindowReport;
  weekly: WindowReport;
  scoped: Record<string, WindowReport>;
  /** min(1 − session, 1 − weekly), fraction; null when unknown. */
  headroom: number | null;
  sessionSaturated: boolean;
  evidence: { freshness: AccountMetrics['freshness']; observedAt: string | null; source: string | null };
  needsSignIn: boolean;
  needsSignInReason: string | null;
  /** Share of its last attempts (at most 20, within the last hour) that failed, fraction 0–1. */
  recentErrorRate: number;
  /** The latency modifier's draw-weight factor for a request without a model (time to first token only), 0.5–1. */
  latencyFactor: number;
  boundSessions: number;
  /** Where the account and its settings come from (CLI accounts); null when not known. */
  origin: AccountOrigin | null;
  /**
   * The OAuth account's grant (its sign-in; src/accounts/grant.ts); null for an API-key account or
   * while its credentials were not read yet. Absent from a leading window of an older version.
   */
  grant?: GrantReport | null;
}

/** An OAuth account's grant as `/status` reports it: never a token. */
export interface GrantReport {
  /** When a person signed in, ISO-8601; null when unknown (an imported token, older credentials). */
  grantedAt: string | null;
  /** Whole days since then (days); null when unknown. */
  ageDays: number | null;
  /** The age is at least `routing.grant-warn-days` (`policy.grantWarnDays`): sign in again soon. */
  warn: boolean;
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

/**
 * While no account of the pool (enabled, not fallback) is usable: the account that becomes usable
 * first (src/routing/recovery.ts, for a model-less request), when, and what it waits for.
 */
export interface PoolRecoveryReport {
  account: string;
  /** ISO-8601; null when no account has a known end to all its blockers. */
  at: string | null;
  /** The blocker that clears last: `5h window`, `7d window`, `throttle`, `needs sign-in`, … */
  what: string;
  /** Set when that blocker is a cooldown (`window_exhausted`, `throttle`, `overloaded`, …). */
  cooldownReason: string | null;
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
  /**
   * For each model family with a model-scoped window whose new sessions would go elsewhere than
   * `preview` says: family → its preview (absent from a leading window of an older version).
   */
  familyPreviews?: Record<string, PreviewReport>;
  /** Null while an account of the pool is usable (absent from a leading window of an older version). */
  poolRecovery?: PoolRecoveryReport | null;
  inflight: number;
  /** Requests held in the waiting room now, and the bytes of their bodies. */
  waiting: { requests: number; bodyBytes: number };
  counters: RouterCounters;
  /** Cost leases: the output estimate per model and the reservations per account, as `/estimation` has them (absent from a leading window of an older version). */
  estimation?: EstimationReport;
  /** The shared store (docs/shared-pool.md): null when none is configured (absent from a leading window of an older version). */
  store?: StoreReport | null;
}

/** The shared store as `/status` reports it: its URL (no user, no password), whether it is reachable and since when. */
export interface StoreReport {
  url: string;
  state: StoreStatus['state'];
  /** ISO-8601. */
  since: string;
  /** What keeps part of the sharing off while connected (a key that does not match the pool's), or null. */
  problem: string | null;
}

const iso = isoTime;

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
  /** See StatusReport.familyPreviews. */
  familyPreviews?: Record<string, PreviewReport>;
  /** The waiting room's load now. */
  waiting: { requests: number; bodyBytes: number };
  /** Requests waiting now in the waiting-room queue named so (absent: none anywhere). */
  queued?: (queue: string) => number;
  /** The shared store's state; absent when none is configured. */
  store?: StoreStatus;
  /** An account's grant time (TokenManager.grantedAt): epoch ms, null when unknown, undefined when not read yet. Absent: none known. */
  grantedAt?: (label: string) => number | null | undefined;
}

const DISABLED: FilterVerdict = Object.freeze({ code: 'disabled' });

/** The preview's filter verdict on `label`; `disabled` for a disabled account (the planner never sees one). */
function eligibilityOf(label: string, enabled: boolean, preview: PreviewReport): FilterVerdict | null {
  if (!enabled) return DISABLED;
  return preview.verdicts.find((x) => x.account === label)?.filter ?? null;
}

/** The account's warm-up (see AccountReport.warmUp). */
function warmUpOf(state: RouterState, label: string, enabled: boolean): AccountReport['warmUp'] {
  const w = state.warmUps.get(label);
  return { enabled, last: w ? { at: iso(w.atMs)!, model: w.model, window: w.window, ok: w.ok, status: w.status } : null };
}

/** The account's re-check state (see AccountReport.recheck). */
function recheckOf(state: RouterState, label: string, eligibility: FilterVerdict | null, now: number): AccountReport['recheck'] {
  const r = state.probes.record(label);
  if (r?.inFlight) return { state: 'probing', failures: r.failures, nextAt: null };
  if (eligibility?.code === 'recovery_probe') return { state: 'due', failures: r?.failures ?? 0, nextAt: null };
  if (r && r.notBeforeMs > now) return { state: 'backing_off', failures: r.failures, nextAt: iso(r.notBeforeMs) };
  return null;
}

/** `label`'s ramp window at `now` (epoch ms), or null when it is not ramping. */
function rampOf(state: RouterState, label: string, now: number): number | null {
  const ramp = state.concurrency.get(label)?.ramp;
  return ramp ? rampWindow(ramp, now) : null;
}

/** The account's grant (see AccountReport.grant): null for an API key, or when its credentials were not read yet. */
function grantOf(input: StatusInput, label: string, kind: AccountReport['kind']): GrantReport | null {
  const at = kind === 'oauth' ? input.grantedAt?.(label) : undefined;
  if (at === undefined) return null;
  const ageDays = grantAgeDays(at, input.now);
  return { grantedAt: iso(at), ageDays, warn: grantWarns(ageDays, input.config.policy.grantWarnDays) };
}

/** The report's `config` block. */
function configReport(cs: ConfigStatus): StatusReport['config'] {
  return { generation: cs.generation, loadedAt: iso(cs.loadedAtMs)!, lastReloadError: cs.lastReloadError, lastReloadErrorAt: iso(cs.lastReloadErrorAtMs), sources: cs.sources };
}

export function buildStatus(input: StatusInput): StatusReport {
  const { config, state, metrics, now } = input;
  const live = state.affinity.live(now);
  const boundBy = new Map<string, number>();
  const latency = state.performance.latencyFactors(now, undefined);
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
    const needsSignIn = state.needsSignIn.has(a.label);
    const eligibility = eligibilityOf(a.label, a.enabled, input.preview);
    return {
      label: a.label,
      status: accountStatus({ enabled: a.enabled, needsSignIn, windowExhausted: m.hardSaturated, coolingReason: cooling?.reason }),
      eligibility,
      kind: a.kind,
      fallback: a.fallback,
      enabled: a.enabled,
      primary: config.policy.primaryAccount === a.label,
      usable: a.enabled && m.usable,
      unusableReason: !a.enabled ? 'disabled' : (m.unusableReason ?? null),
      inflight: state.leases.inflight(a.label),
      concurrencyLimit: state.concurrency.limit(a.label, now)?.limit ?? null,
      rampWindow: rampOf(state, a.label, now),
      queued: input.queued?.(admissionQueue(a.label)) ?? 0,
      coolingUntil: iso(cooling?.untilMs),
      coolingReason: cooling?.reason ?? null,
      coolingWindows: cooling?.windows ?? null,
      scopedCoolingUntil: Object.fromEntries([...(state.scopedCooldowns.get(a.label) ?? [])].filter(([, c]) => c.untilMs > now).map(([f, c]) => [f, iso(c.untilMs)!])),
      recheck: recheckOf(state, a.label, eligibility, now),
      warmUp: warmUpOf(state, a.label, a.warmUp === true),
      session: windowReport(snap?.session, m.sessionUsed, m.sessionResetMs),
      weekly: windowReport(snap?.weekly, m.weeklyUsed, m.weeklyResetMs),
      scoped,
      headroom: m.headroom,
      sessionSaturated: m.sessionSaturated,
      evidence: { freshness: m.freshness, observedAt: iso(snap?.observedAtMs), source: snap?.source ?? null },
      needsSignIn,
      needsSignInReason: state.needsSignIn.get(a.label) ?? null,
      boundSessions: boundBy.get(a.label) ?? 0,
      recentErrorRate: state.performance.recentErrorRate(a.label, now),
      latencyFactor: latency.get(a.label) ?? 1,
      origin: a.origin ?? null,
      grant: grantOf(input, a.label, a.kind),
    };
  });
  const usableAccounts = accounts.filter((a) => a.usable && !a.fallback).length;
  return {
    service: 'claude-router',
    uptimeS: Math.round((now - input.startedAtMs) / 1000),
    policy: { ...config.policy },
    config: configReport(input.configStatus),
    accounts,
    usableAccounts,
    boundSessions: live.length,
    sessions: live.map((b) => ({
      sessionId: b.sessionId,
      account: b.account,
      lastServedAt: iso(b.lastServedAtMs)!,
      idleLeftMs: Math.max(0, b.lastServedAtMs + config.policy.sessionAffinityIdleTtlMs - now),
    })),
    preview: input.preview,
    familyPreviews: input.familyPreviews ?? {},
    poolRecovery: usableAccounts === 0 ? poolRecovery(config, state, metrics, now) : null,
    inflight: state.leases.total(),
    waiting: input.waiting,
    counters: { ...state.counters },
    estimation: buildEstimation(state, config),
    store: input.store ? { url: input.store.url, state: input.store.state, since: iso(input.store.sinceMs)!, problem: input.store.problem } : null,
  };
}

function poolRecovery(config: RuntimeConfig, state: RouterState, metrics: Map<string, AccountMetrics>, now: number): PoolRecoveryReport | null {
  const pool = config.accounts.filter((a) => a.enabled && !a.fallback);
  const [first] = recoveriesByTime(
    pool.map((a) => ({ label: a.label, metrics: metrics.get(a.label)!, cooldown: state.cooldowns.get(a.label), snapshot: state.snapshots.get(a.label) })),
    now,
  );
  return first ? { account: first.label, at: iso(first.atMs), what: first.what, cooldownReason: first.cooldownReason ?? null } : null;
}
