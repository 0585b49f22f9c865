/**
 * The design seed's rollout metrics, computed from a decision log (or, by the what-if
 * simulator, from the decisions of a simulated run). Pure.
 *
 * Definitions (so two reports are comparable):
 * - session request: a `/v1/messages` decision with a sticky key (its hash: a session id
 *   or a conversation fingerprint) that an account served;
 * - mid-session switch: a session request served by a different non-fallback
 *   account than the session's previous non-fallback served request;
 * - forced switch: one whose previous account could not keep the session for its quota or
 *   sign-in — the switching request's plan saw it exhausted (5h, 7d, account-wide or the
 *   model's window), at the session soft limit, signed out, revoked, disabled or removed, or
 *   its attempt there answered so; every other switch (a throttle, an overload, a network
 *   error, a better score) is unforced (counted only for entries that carry their candidates:
 *   a decision log's, not a simulated run's);
 * - A→B→A ping-pong: a switch back to the account the session left, within
 *   5 minutes of leaving it;
 * - extra cache-creation tokens: cache-creation input tokens reported on the
 *   switching requests (the prefix written again on the new account);
 * - the share of wall-clock time during which ≤ 1 account was usable: between consecutive
 *   decisions, the interval counts for the earlier decision's usable count; the rest of
 *   the span is the time with ≥ 2 usable accounts;
 * - fallback share: served requests answered by a fallback account;
 * - weekly resets that lapsed with allowance left over: weeklyResets.ts.
 */
import type { AttemptRecord, DecisionRecord, RecordedCandidate, UsageRecord } from './decision';
import { summarizeWeeklyResets, WindowPeriods, type WeeklyReset, type WeeklyResetSummary } from './weeklyResets';

/** Ping-pong window (ms). */
export const PING_PONG_WINDOW_MS = 5 * 60_000;

export interface PolicyReport extends WeeklyResetSummary {
  decisions: number;
  sessionRequests: number;
  sessions: number;
  midSessionSwitches: number;
  /** Mid-session switches not forced by quota or sign-in (see the definitions above). */
  unforcedSwitches: number;
  switchesPer1000SessionRequests: number;
  pingPongPairs: number;
  /** Cache-creation tokens on switching requests. */
  switchCacheCreationTokens: number;
  /** All cache-creation tokens, for scale. */
  cacheCreationTokens: number;
  cacheReadTokens: number;
  /** Fraction (0–1) of the logged wall-clock span with at most one usable account. */
  shareTimeAtMostOneUsable: number;
  /** Hours of the logged wall-clock span with at least two usable accounts. */
  hoursAtLeastTwoUsable: number;
  /** Fraction (0–1) of served requests answered by a fallback account. */
  fallbackShare: number;
  bySelectionReason: Record<string, number>;
  byOutcome: Record<string, number>;
}

/** What the report reads of one decision. */
export interface ReportEntry {
  /** Arrival time, epoch ms. */
  atMs: number;
  path: string;
  selectionReason: string;
  outcome: string;
  servedBy: string | null;
  servedByFallback: boolean;
  stickyKeyHash: string | null;
  /** Non-fallback accounts usable when it was planned. */
  usableAccounts: number;
  usage: UsageRecord | null;
  /** The recorded candidates' filter verdicts and the attempts, which tell a forced switch from an unforced one (absent: not known). */
  candidates?: readonly Pick<RecordedCandidate, 'account' | 'filter'>[];
  attempts?: readonly Pick<AttemptRecord, 'account' | 'result'>[];
}

/** Filter verdicts of an account that cannot keep a session for its quota or sign-in (src/routing/planner/verdict.ts). */
const QUOTA_VERDICTS: ReadonlySet<string> = new Set(['window_exhausted', 'scoped_exhausted', 'soft_limit', 'needs_sign_in', 'disabled']);
/** Cooldown reasons that say the same. */
const QUOTA_COOLDOWNS: ReadonlySet<string> = new Set(['window_exhausted', 'forbidden', 'needs_sign_in']);
/** Attempt results that say the same (src/quota/classify.ts kinds; `refresh_*` from a failed token refresh, except a network failure). */
const QUOTA_RESULTS: ReadonlySet<string> = new Set([
  'window_exhausted',
  'model_scoped_exhausted',
  'entitlement',
  'unauthorized',
  'forbidden',
  'refresh_invalid_grant',
  'refresh_no_refresh_token',
  'refresh_rejected',
]);

/** Whether the switch in `r` away from `left` was forced by quota or sign-in; undefined when the entry does not say. */
function forcedSwitch(r: ReportEntry, left: string): boolean | undefined {
  if (!r.candidates || !r.attempts) return undefined;
  const c = r.candidates.find((x) => x.account === left);
  if (!c) return true; // removed or disabled since
  const f = c.filter;
  if (f && (QUOTA_VERDICTS.has(f.code) || (f.code === 'cooling' && QUOTA_COOLDOWNS.has(f.reason)))) return true;
  return r.attempts.some((a) => a.account === left && QUOTA_RESULTS.has(a.result));
}

/** Counts by a recorded string in a Map: a name such as `constructor` or `__proto__` is a key like any other. */
function inc(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** Where a session was last served, and the account it last switched away from. */
interface SessionTrail {
  account: string;
  from?: { account: string; leftAtMs: number };
}

/**
 * The report, built one decision at a time: `add` takes decisions in arrival order, so a long log
 * (or a simulated run) is never held whole. Weekly-window evidence is order-free (`weekly`).
 */
export class ReportBuilder {
  /** The weekly windows seen in the candidates' quota evidence. */
  readonly weekly = new WindowPeriods();
  private readonly bySelectionReason = new Map<string, number>();
  private readonly byOutcome = new Map<string, number>();
  private readonly last = new Map<string, SessionTrail>();
  private decisions = 0;
  private sessionRequests = 0;
  private switches = 0;
  private unforced = 0;
  private pingPong = 0;
  private switchCache = 0;
  private cacheCreation = 0;
  private cacheRead = 0;
  private served = 0;
  private fallbackServed = 0;
  private lowTime = 0;
  private totalTime = 0;
  private previous: { atMs: number; usable: number } | undefined;
  private firstUsable = 0;

  /** One decision; decisions come in arrival order. */
  add(r: ReportEntry): void {
    this.decisions++;
    inc(this.bySelectionReason, r.selectionReason);
    inc(this.byOutcome, r.outcome);
    const prev = this.previous;
    if (prev) {
      const dt = r.atMs - prev.atMs;
      if (dt > 0) {
        this.totalTime += dt;
        if (prev.usable <= 1) this.lowTime += dt;
      }
    } else {
      this.firstUsable = r.usableAccounts;
    }
    this.previous = { atMs: r.atMs, usable: r.usableAccounts };
    if (r.path !== '/v1/messages' || !r.servedBy) return;
    this.served++;
    this.cacheCreation += r.usage?.cacheCreationInputTokens ?? 0;
    this.cacheRead += r.usage?.cacheReadInputTokens ?? 0;
    if (r.servedByFallback) {
      this.fallbackServed++;
      return;
    }
    const key = r.stickyKeyHash;
    if (!key) return;
    this.sessionRequests++;
    const trail = this.last.get(key);
    if (trail && trail.account !== r.servedBy) {
      this.switches++;
      if (forcedSwitch(r, trail.account) === false) this.unforced++;
      this.switchCache += r.usage?.cacheCreationInputTokens ?? 0;
      if (trail.from && trail.from.account === r.servedBy && r.atMs - trail.from.leftAtMs <= PING_PONG_WINDOW_MS) this.pingPong++;
      this.last.set(key, { account: r.servedBy, from: { account: trail.account, leftAtMs: r.atMs } });
    } else if (!trail) {
      this.last.set(key, { account: r.servedBy });
    }
  }

  /**
   * The report. Weekly resets are those of the evidence seen (`weekly`) up to the last decision,
   * unless `resets` gives them (a simulation knows them exactly).
   */
  finish(resets?: readonly WeeklyReset[]): PolicyReport {
    const endMs = this.previous?.atMs ?? 0;
    return {
      decisions: this.decisions,
      sessionRequests: this.sessionRequests,
      sessions: this.last.size,
      midSessionSwitches: this.switches,
      unforcedSwitches: this.unforced,
      switchesPer1000SessionRequests: this.sessionRequests ? (this.switches * 1000) / this.sessionRequests : 0,
      pingPongPairs: this.pingPong,
      switchCacheCreationTokens: this.switchCache,
      cacheCreationTokens: this.cacheCreation,
      cacheReadTokens: this.cacheRead,
      shareTimeAtMostOneUsable: this.totalTime ? this.lowTime / this.totalTime : this.decisions && this.firstUsable <= 1 ? 1 : 0,
      hoursAtLeastTwoUsable: (this.totalTime - this.lowTime) / 3_600_000,
      fallbackShare: this.served ? this.fallbackServed / this.served : 0,
      // Own properties whatever the name (fromEntries defines them: `__proto__` stays a count).
      bySelectionReason: Object.fromEntries(this.bySelectionReason),
      byOutcome: Object.fromEntries(this.byOutcome),
      ...summarizeWeeklyResets(resets ?? this.weekly.resets(endMs)),
    };
  }
}

/** What the report reads of a decision record. */
export function reportEntry(r: DecisionRecord): ReportEntry {
  return {
    atMs: Date.parse(r.ts),
    path: r.path,
    selectionReason: r.selectionReason,
    outcome: r.outcome,
    servedBy: r.servedBy,
    servedByFallback: r.servedByFallback,
    stickyKeyHash: r.stickyKeyHash,
    usableAccounts: r.usableAccounts ?? 0,
    usage: r.usage,
    candidates: r.candidates,
    attempts: r.attempts,
  };
}

/** Feeds the weekly-window evidence of a record's candidates (at its arrival time `atMs`) to `weekly`. */
export function observeWeeklyWindows(weekly: WindowPeriods, r: DecisionRecord, atMs: number): void {
  for (const c of r.candidates ?? []) if (!c.fallback && c.metrics) weekly.observe(c.account, atMs, c.metrics.weeklyUsed, c.metrics.weeklyResetMs);
}

/** Computes the report over records in any order (they are sorted by time). */
export function computeReport(input: readonly DecisionRecord[]): PolicyReport {
  const entries = input.map((r) => ({ r, e: reportEntry(r) })).sort((a, b) => a.e.atMs - b.e.atMs);
  const builder = new ReportBuilder();
  for (const { r, e } of entries) {
    builder.add(e);
    observeWeeklyWindows(builder.weekly, r, e.atMs);
  }
  return builder.finish();
}

/** A fraction as a percentage with one decimal: 0.431 → `43.1%`. */
const pct = (f: number) => `${(f * 100).toFixed(1)}%`;

/** The weekly-reset lines of a report. */
function weeklyResetLines(r: PolicyReport): string[] {
  const head = `weekly resets: ${r.weeklyResets.length} (${r.weeklyResetsWithUnused} expired with unused allowance, ${r.unusedWeeklyAllowance.toFixed(2)} account-weeks unused in all)`;
  return [
    head,
    ...r.weeklyResets.map(
      (w) =>
        `  ${w.account}: reset ${new Date(w.resetAtMs).toISOString()}, ${pct(w.unusedFraction)} unused${w.unusedTokens === undefined ? '' : ` (${Math.round(w.unusedTokens)} tokens)`}`,
    ),
  ];
}

/** The report as text, one metric a line. */
export function formatReport(r: PolicyReport): string {
  const lines = [
    `decisions: ${r.decisions}`,
    `session requests: ${r.sessionRequests} (${r.sessions} sessions)`,
    `mid-session switches: ${r.midSessionSwitches} (${r.switchesPer1000SessionRequests.toFixed(2)} per 1,000 session requests)`,
    `mid-session switches not forced by quota or sign-in: ${r.unforcedSwitches}`,
    `A→B→A ping-pong pairs within 5 minutes: ${r.pingPongPairs}`,
    `cache-creation tokens on switches: ${r.switchCacheCreationTokens} (of ${r.cacheCreationTokens} cache-creation, ${r.cacheReadTokens} cache-read)`,
    `wall-clock time with ≤ 1 usable account: ${pct(r.shareTimeAtMostOneUsable)} (${r.hoursAtLeastTwoUsable.toFixed(1)} h with ≥ 2)`,
    `fallback share: ${pct(r.fallbackShare)}`,
    ...weeklyResetLines(r),
    'decisions by selection reason:',
    ...Object.entries(r.bySelectionReason)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `  ${k}: ${v}`),
    'decisions by outcome:',
    ...Object.entries(r.byOutcome)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `  ${k}: ${v}`),
  ];
  return lines.join('\n') + '\n';
}
