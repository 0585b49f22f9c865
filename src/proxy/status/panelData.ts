/**
 * What the "Show Routing Status" panel draws, built in the extension from the `/status` report,
 * the recent decision records and the usage history: every word, countdown and local time is
 * computed here (the page, src/webview/, only lays it out and writes epoch times as the viewer's
 * local clock). Labels, numbers and 16-hex session hashes only — never a token or a raw session id.
 * Pure: the time is an argument.
 */
import { formatDuration } from '../../quota/duration';
import { computeReport } from '../../routing/report';
import { DECISION_OUTCOMES, metricsFromRecord, type DecisionRecord } from '../../routing/decision';
import { sessionTimeline, type SwitchCause } from '../../routing/sessionTimeline';
import type { EstimationReport } from './estimation';
import { estimationLines, modelEstimateText, reservedText } from './estimationView';
import type { StatusReport } from './status';
import {
  accountState,
  candidateText,
  decisionReasonText,
  eligibilityText,
  explainReason,
  grantText,
  grantWarning,
  percent,
  poolSummary,
  timeUntil,
  warmUpText,
  whyNow,
  type AccountState,
} from './statusView';
import type { HistoryRange, UsageSeries } from '../state/usageHistory';

/** One usage bar: `used` is a fraction 0–1 (null: unknown). */
export interface BarView {
  label: string;
  used: number | null;
  /** `35% · resets in 2 h 5 min` */
  text: string;
}

export interface AccountView {
  label: string;
  state: AccountState;
  badges: string[];
  /** `in flight 1 · sessions 2 · 31% of the last 200 requests` */
  load: string;
  /** `Status: Active · eligibility for a new request: eligible`, then the OAuth grant's age (`· signed in 12 d ago`), then the warm-up when the account has one (`· warm-up ok (…)`) */
  statusLine: string;
  bars: BarView[];
  warnings: string[];
  /** Why a new request would or would not go here now. */
  why: string;
}

export interface DecisionView {
  requestId: string;
  /** Epoch ms the request arrived. */
  atMs: number;
  servedBy: string | null;
  outcome: string;
  /** The sticky-key hash (16 hex) or null. */
  session: string | null;
  sessionKind: string;
  model: string | null;
  /** `it has the most headroom · success · session 3fa2c1d0 · 2 attempts` (the serving account is `servedBy`) */
  summary: string;
  attempts: string;
  candidates: Array<{ rank: number; account: string; verdict: string; text: string; session: string; weekly: string }>;
}

export interface LaneView {
  hash: string;
  /** First 8 hex digits of the hash. */
  short: string;
  kind: string;
  firstMs: number;
  lastMs: number;
  /** `3 requests · 1 switch · work → personal` */
  summary: string;
  requests: Array<{ atMs: number; account: string | null; outcome: string; switched: boolean; cause: SwitchCause | null; why: string | null }>;
}

export interface PanelData {
  now: number;
  error: string | null;
  role: string;
  simulated: boolean;
  settingsError: string | null;
  /** No account configured: the page shows the next steps instead of the pool. */
  emptyPool: boolean;
  /** The pool in one line, or null before the first report. */
  header: string | null;
  /** The model the "next request" preview was computed for, or null (a model-less request). */
  previewModel: string | null;
  policy: Array<{ key: string; value: string; source: string }>;
  configLine: string;
  accounts: AccountView[];
  /** The account labels in pool order, for colours that stay the same across charts and lanes. */
  palette: string[];
  range: HistoryRange;
  history: UsageSeries[];
  sessions: Array<{ hash: string; short: string; account: string; idle: string }>;
  sessionAffinity: boolean;
  lanes: LaneView[];
  /** The decision browser's page(s) from the log on disk, newest first (see {@link DecisionBrowser}). */
  decisions: DecisionView[];
  /** Older matching decisions may be in the log ("Show more" reads the next page). */
  decisionsMore: boolean;
  /** The browser's query is being read. */
  decisionsLoading: boolean;
  /** Why the log could not be read with these filters, or null. */
  decisionsError: string | null;
  /** The selection reasons to filter by: those of the recent decisions, sorted. */
  reasons: string[];
  /** Every decision outcome. */
  outcomes: string[];
  /** Rows of the rollout metrics, or null with no decision yet. */
  metrics: { title: string; rows: Array<[string, string]> } | null;
  /** Cost leases (`/estimation`): what is leased and why, a row per model and per account; null before a report has it. */
  estimation: { note: string; models: Array<[string, string]>; accounts: Array<[string, string]> } | null;
}

export interface PanelInput {
  /** Epoch ms. */
  now: number;
  status: StatusReport | undefined;
  /** Recent decision records, oldest first. */
  decisions: readonly DecisionRecord[];
  error: string | undefined;
  role: string;
  simulated: boolean;
  settingsError: string | null;
  previewModel: string | null;
  range: HistoryRange;
  history: UsageSeries[];
  /** The decision browser's records as read from the log on disk. */
  browser: DecisionBrowser;
}

/** What the decision browser read through `/decisions` (decisionQuery.ts) for the viewer's filters. */
export interface DecisionBrowser {
  /** The records of the pages read, oldest first. */
  records: readonly DecisionRecord[];
  /** The cursor of the next (older) page, or null when none is left. */
  next: string | null;
  loading: boolean;
  error: string | null;
}

const CAUSE_TEXT: Record<SwitchCause, string> = {
  quota: 'quota',
  sign_in: 'sign-in',
  transient: 'transient error',
  spill: 'spill',
  sticky_threshold: 'sticky threshold',
  unbound: 'not bound',
  other: 'other',
};

/** A switch's cause in words: `quota (window exhausted)`. */
export function switchText(cause: SwitchCause, code: string | null): string {
  const detail = code ? explainReason(code) : '';
  return detail && detail !== CAUSE_TEXT[cause] ? `${CAUSE_TEXT[cause]} (${detail})` : CAUSE_TEXT[cause];
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function headerLine(s: StatusReport, role: string): string {
  const { usable, total } = poolSummary(s);
  const who = role === 'leader' ? 'This window serves the proxy. ' : role === 'follower' ? 'Another window serves the proxy. ' : '';
  const pool = total === 0 ? 'No account of the pool is enabled' : `${usable} of ${plural(total, 'account', 'accounts')} usable`;
  return `${who}${pool} · ${plural(s.boundSessions, 'bound session', 'bound sessions')} · ${s.inflight} in flight · ${plural(s.counters.requests, 'request', 'requests')}, ${plural(s.counters.failovers, 'failover', 'failovers')}`;
}

function policyRows(s: StatusReport): PanelData['policy'] {
  const p = s.policy;
  const src = s.config.sources;
  const rows: Array<[string, unknown]> = [
    ['strategy', p.strategy],
    ['account-ranking', p.accountRanking],
    ['prefer-primary', p.preferPrimary],
    ['primary-account', p.primaryAccount || '—'],
    ['session-affinity', p.sessionAffinity],
    ['session-fingerprint', p.sessionFingerprint],
    ['session-affinity-idle-ttl-ms', p.sessionAffinityIdleTtlMs],
    ['spill-inflight', p.spillInflight],
    ['max-inflight-per-account', p.maxInflightPerAccount],
    ['session-soft-limit', p.sessionSoftLimit],
    ['session-reset-tolerance-ms', p.sessionResetToleranceMs],
    ['allow-overage', p.allowOverage],
    ['quota-routing', p.quotaRouting],
  ];
  return rows.map(([key, value]) => ({ key, value: String(value), source: src[key] ?? 'default' }));
}

function accountViews(s: StatusReport, decisions: readonly DecisionRecord[], now: number): AccountView[] {
  const served = decisions.filter((d) => d.servedBy !== null);
  return s.accounts.map((a) => {
    const state = accountState(a, s);
    const bar = (label: string, used: number | null, resetsAt: string | null): BarView => ({ label, used, text: `${percent(used)} · resets in ${timeUntil(resetsAt, now)}` });
    const share = served.length
      ? `${percent(served.filter((d) => d.servedBy === a.label).length / served.length)} of the last ${plural(served.length, 'request', 'requests')}`
      : null;
    const warnings: string[] = [];
    if (a.coolingUntil) warnings.push(`Cooling down (${(a.coolingReason ?? '').replace(/_/g, ' ')}) for ${timeUntil(a.coolingUntil, now)}`);
    if (a.needsSignIn) warnings.push(`Needs sign-in: ${a.needsSignInReason ?? ''}`);
    if (grantWarning(a)) warnings.push(capitalize(grantWarning(a)));
    return {
      label: a.label,
      state,
      badges: [state.replace(/_/g, ' '), ...(a.primary ? ['primary'] : []), ...(a.fallback ? ['fallback'] : [])],
      load: [`in flight ${a.inflight}`, `sessions ${a.boundSessions}`, ...(share ? [share] : [])].join(' · '),
      statusLine: [`Status: ${a.status} · eligibility for a new request: ${eligibilityText(a, now)}`, grantText(a), warmUpText(a, now)].filter(Boolean).join(' · '),
      bars: [
        bar('5 h', a.session.used, a.session.resetsAt),
        bar('7 d', a.weekly.used, a.weekly.resetsAt),
        ...Object.entries(a.scoped).map(([family, w]) => bar(`7 d ${family}`, w.used, w.resetsAt)),
      ],
      warnings,
      why: whyNow(a, s, now),
    };
  });
}

/** `text` with its first letter upper-case. */
function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function decisionViews(decisions: readonly DecisionRecord[], now: number): DecisionView[] {
  return [...decisions].reverse().map((r) => {
    const atMs = Date.parse(r.ts);
    const summary = [
      decisionReasonText(r),
      r.outcome,
      ...(r.stickyKeyHash ? [`${r.stickyKind} ${r.stickyKeyHash.slice(0, 8)}`] : []),
      ...(r.attempts.length > 1 ? [`${r.attempts.length} attempts`] : []),
    ].join(' · ');
    return {
      requestId: r.requestId,
      atMs,
      servedBy: r.servedBy,
      outcome: r.outcome,
      session: r.stickyKeyHash,
      sessionKind: r.stickyKind,
      model: r.model,
      summary,
      attempts: r.attempts.map((a) => `${a.account} → ${a.result}${a.status ? ` (${a.status})` : ''}`).join(', '),
      candidates: r.candidates.map((c) => ({
        rank: c.rank,
        account: c.account,
        verdict: c.verdict.replace(/_/g, ' '),
        text: candidateText(c, metricsFromRecord(c.metrics), now),
        session: percent(c.metrics.sessionUsed),
        weekly: percent(c.metrics.weeklyUsed),
      })),
    };
  });
}

function laneViews(decisions: readonly DecisionRecord[]): LaneView[] {
  return sessionTimeline(decisions).map((lane) => ({
    hash: lane.hash,
    short: lane.hash.slice(0, 8),
    kind: lane.kind,
    firstMs: lane.firstMs,
    lastMs: lane.lastMs,
    summary: `${plural(lane.requests.length, 'request', 'requests')} · ${plural(lane.switches, 'switch', 'switches')} · ${lane.accounts.join(' → ') || 'never served'}`,
    requests: lane.requests.map((q) => ({
      atMs: q.atMs,
      account: q.account,
      outcome: q.outcome,
      switched: q.switched,
      cause: q.cause,
      why: q.cause ? switchText(q.cause, q.causeCode) : null,
    })),
  }));
}

function metricsRows(decisions: readonly DecisionRecord[]): PanelData['metrics'] {
  if (decisions.length === 0) return null;
  const rep = computeReport(decisions);
  const pct = (f: number) => `${(f * 100).toFixed(1)}%`;
  return {
    title: `Routing metrics (last ${plural(rep.decisions, 'decision', 'decisions')})`,
    rows: [
      ['mid-session switches', `${rep.midSessionSwitches} (${rep.switchesPer1000SessionRequests.toFixed(1)} per 1,000 session requests)`],
      ['A→B→A ping-pong within 5 min', String(rep.pingPongPairs)],
      ['cache-creation tokens on switches', String(rep.switchCacheCreationTokens)],
      // A share of time needs a span: one decision has none.
      ['time with ≤ 1 usable account', rep.decisions < 2 ? '—' : pct(rep.shareTimeAtMostOneUsable)],
      ['fallback share', pct(rep.fallbackShare)],
      [
        'by selection reason',
        Object.entries(rep.bySelectionReason)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ') || '—',
      ],
    ],
  };
}

/** The panel's data (see {@link PanelData}). */
export function buildPanelData(input: PanelInput): PanelData {
  const { now, status: s, decisions } = input;
  return {
    now,
    error: input.error ?? null,
    role: input.role,
    simulated: input.simulated,
    settingsError: input.settingsError,
    emptyPool: s !== undefined && s.accounts.length === 0,
    header: s && s.accounts.length > 0 ? headerLine(s, input.role) : null,
    previewModel: input.previewModel,
    policy: s ? policyRows(s) : [],
    configLine: s ? `Configuration generation ${s.config.generation}${s.config.lastReloadError ? ` · last reload rejected: ${s.config.lastReloadError}` : ''}` : '',
    accounts: s ? accountViews(s, decisions, now) : [],
    palette: s ? s.accounts.map((a) => a.label) : [],
    range: input.range,
    history: input.history,
    sessions: (s?.sessions ?? []).slice(0, 50).map((x) => ({ hash: x.sessionId, short: x.sessionId.slice(0, 8), account: x.account, idle: formatDuration(x.idleLeftMs / 1000) })),
    sessionAffinity: s?.policy.sessionAffinity ?? false,
    lanes: laneViews(decisions),
    decisions: decisionViews(input.browser.records, now),
    decisionsMore: input.browser.next !== null,
    decisionsLoading: input.browser.loading,
    decisionsError: input.browser.error,
    reasons: [...new Set(decisions.map((r) => r.selectionReason))].sort(),
    outcomes: [...DECISION_OUTCOMES],
    metrics: metricsRows(decisions),
    estimation: s?.estimation ? estimationRows(s.estimation) : null,
  };
}

function estimationRows(e: EstimationReport): PanelData['estimation'] {
  const [note] = estimationLines(e);
  return {
    note,
    models: e.models.map((m) => [m.model, modelEstimateText(m, e.minSamples)]),
    accounts: e.accounts.map((a) => [a.account, reservedText(a)]),
  };
}
