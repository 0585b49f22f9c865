/**
 * A decision log → the workload it records (workload.ts) and the report of what actually happened, one record at a time:
 * a log of any length is read once and never held whole (only a compact entry per request). Pure. The rules: docs/whatif.md#reconstruction.
 */
import { modelFamily } from '../quota/family';
import { isAuxiliaryClass, recordedRequestClass } from '../routing/requestClass';
import type { DecisionRecord, UsageRecord } from '../routing/decision';
import { recordedPolicy } from '../routing/recordedPolicy';
import { observeWeeklyWindows, ReportBuilder, reportEntry, type PolicyReport, type ReportEntry } from '../routing/report';
import type { RoutingPolicy } from '../routing/policy';
import { WindowPeriods, type WindowPeriod } from '../routing/weeklyResets';
import { chargedTokens, DEFAULT_FIVE_HOUR_LIMIT_TOKENS, DEFAULT_SEVEN_DAY_LIMIT_TOKENS, FIVE_HOUR_MS, SEVEN_DAY_MS } from '../sim/windows';
import { inferAllowance, ServedTokens } from './allowance';
import { defaultCooldownMs, faultKindOf } from './faults';
import type { AllowanceSource, FaultKind, SessionStart, TransientFault, WindowStart, Workload, WorkloadAccount, WorkloadRequest } from './workload';

/** The prompt-cache lifetime assumed unless the log shows a longer one: Anthropic's default, 5 min in ms (docs/anthropic-api.md). */
export const DEFAULT_CACHE_TTL_MS = 5 * 60_000;
/** The longer lifetime Claude Code asks for in subscription mode: 1 h in ms (docs/claude-code-client.md). */
export const LONG_CACHE_TTL_MS = 60 * 60_000;

/** What reading the log found. */
export interface ReconstructStats {
  /** Decision records read. */
  records: number;
  /** `/v1/messages` requests in the workload. */
  requests: number;
  /** Decisions of other paths (`count_tokens`, `models`): counted in the actual report, not replayed. */
  otherPaths: number;
  /** Requests the client got a 4xx for (`client_error`): they fail under any policy, not replayed. */
  clientErrors: number;
  /** Requests without recorded usage whose tokens were estimated. */
  usageEstimated: number;
  /** Transient faults found (replayed on the same account at the same time). */
  faults: number;
}

/** The workload, the report of what the log shows happened, and what reading it found. */
export interface Reconstruction {
  workload: Workload;
  actual: PolicyReport;
  stats: ReconstructStats;
}

/** One request as read, before the log is complete. */
interface RawRequest {
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

/** What a record's candidates say of an account: the configured part of a WorkloadAccount. */
type AccountSeen = Pick<WorkloadAccount, 'label' | 'index' | 'primary' | 'fallback' | 'priority' | 'costTier'>;

/** A cooldown seen on an account in a candidate's metrics. */
interface CoolingSeen {
  atMs: number;
  untilMs: number;
  reason: string | undefined;
}

/** Builds the reconstruction from decision records given in any order (a log's order is completion order). */
export class WorkloadBuilder {
  private readonly requests: RawRequest[] = [];
  private readonly entries: ReportEntry[] = [];
  private readonly actual = new ReportBuilder();
  private readonly accounts = new Map<string, AccountSeen>();
  private readonly policies: RoutingPolicy[] = [];
  private readonly policyIndex = new Map<string, number>();
  private readonly fiveHour = new WindowPeriods();
  private readonly sevenDay = new WindowPeriods();
  private readonly faults: Array<{ account: string; atMs: number; answerMs: number; kind: FaultKind; requestId: string }> = [];
  private readonly cooling = new Map<string, CoolingSeen[]>();
  private readonly models = new Map<string, string>();
  private readonly stats: ReconstructStats = { records: 0, requests: 0, otherPaths: 0, clientErrors: 0, usageEstimated: 0, faults: 0 };

  /**
   * One decision record (as `readDecisionRecord` gives it).
   * @throws Error, having taken nothing of it, when it lacks what the simulation reads (a readable `ts`, `path`, `policy`, `candidates`)
   */
  add(r: DecisionRecord): void {
    const atMs = Date.parse(r.ts);
    if (!Number.isFinite(atMs)) throw new Error(`unreadable time ${JSON.stringify(r.ts).slice(0, 40)}`);
    if (typeof r.path !== 'string' || !Array.isArray(r.candidates) || typeof r.policy !== 'object' || r.policy === null) throw new Error('no path, policy or candidates');
    this.stats.records++;
    observeWeeklyWindows(this.actual.weekly, r, atMs);
    this.observeCandidates(r, atMs);
    // The router's own limit warm-up is no client traffic: nothing to replay, and no policy placed it.
    if (r.warmUp !== undefined) return;
    if (r.path !== '/v1/messages') {
      this.stats.otherPaths++;
      return;
    }
    // What actually happened, measured over what the simulation replays: the Messages decisions.
    this.entries.push(reportEntry(r));
    let t = atMs;
    for (const a of r.attempts ?? []) {
      t += a.ms;
      const kind = faultKindOf(a.result);
      // At the request's arrival: the simulator sends every attempt of a request then.
      if (kind) this.faults.push({ account: a.account, atMs, answerMs: t - atMs, kind, requestId: r.requestId });
    }
    if (r.outcome === 'client_error') {
      this.stats.clientErrors++;
      return;
    }
    this.requests.push({
      atMs,
      requestId: r.requestId,
      session: r.stickyKeyHash,
      model: this.model(r.model),
      stream: r.stream === true,
      usage: usageOf(r.usage),
      servedBy: r.servedBy === null ? null : this.label(r.servedBy),
      servedByFallback: r.servedByFallback,
      durationMs: Math.max(0, r.durationMs ?? 0),
      visibleAtMs: t,
      policyIndex: this.policyOf(r),
      boundAccount: r.affinity?.boundAccount ?? null,
      auxiliary: isAuxiliaryClass(recordedRequestClass(r.requestClass)),
    });
  }

  private observeCandidates(r: DecisionRecord, atMs: number): void {
    for (const c of r.candidates ?? []) {
      if (!this.accounts.has(c.account)) {
        const si = r.strategyInputs?.accounts[c.account];
        this.accounts.set(c.account, { label: c.account, index: c.index, primary: c.primary, fallback: c.fallback, priority: si?.priority, costTier: si?.costTier });
      }
      const m = c.metrics;
      if (!m || c.fallback) continue;
      this.fiveHour.observe(c.account, atMs, m.sessionUsed, m.sessionResetMs);
      this.sevenDay.observe(c.account, atMs, m.weeklyUsed, m.weeklyResetMs);
      if (m.unusableReason === 'cooldown' && m.coolingUntilMs !== null && m.coolingUntilMs > atMs) {
        let list = this.cooling.get(c.account);
        if (!list) this.cooling.set(c.account, (list = []));
        const reason = c.filter?.code === 'cooling' ? c.filter.reason : undefined;
        if (!list.some((x) => x.untilMs === m.coolingUntilMs && x.atMs <= atMs)) list.push({ atMs, untilMs: m.coolingUntilMs, reason });
      }
    }
  }

  /** One string per model name, however many records name it. */
  private model(name: string | null): string | null {
    if (name === null) return null;
    let m = this.models.get(name);
    if (m === undefined) this.models.set(name, (m = name));
    return m;
  }

  /** The account map's own copy of a label (one string per account, however many records name it). */
  private label(name: string): string {
    return this.accounts.get(name)?.label ?? name;
  }

  private policyOf(r: DecisionRecord): number {
    // What recordedPolicy reads, cheaply: a record without strategy inputs needs no JSON.
    const p = r.policy;
    let primary = '';
    for (const c of r.candidates) if (c.primary) primary = c.account;
    let key = `${r.strategy}|${r.ranking}|${p.preferPrimary}|${p.sessionAffinity}|${p.sessionAffinityIdleTtlMs}|${p.spillInflight}|${p.quotaRouting}|${primary}`;
    if (r.strategyInputs) {
      const { nowMs: _now, roundRobinCursor: _cursor, ...keys } = r.strategyInputs;
      key += JSON.stringify(keys);
    }
    let i = this.policyIndex.get(key);
    if (i === undefined) {
      i = this.policies.length;
      this.policies.push(recordedPolicy(r));
      this.policyIndex.set(key, i);
    }
    return i;
  }

  /** The reconstruction. @throws Error when no `/v1/messages` request was read (nothing to replay) */
  finish(): Reconstruction {
    if (this.requests.length === 0) throw new Error('the log holds no /v1/messages request to replay');
    this.entries.sort((a, b) => a.atMs - b.atMs);
    for (const e of this.entries) this.actual.add(e);
    const actual = this.actual.finish();

    const raw = this.requests.sort((a, b) => a.atMs - b.atMs);
    const startMs = raw[0].atMs;
    const requests = this.requestsOf(raw);
    let endMs = startMs;
    for (const r of requests) endMs = Math.max(endMs, r.atMs + r.durationMs);
    const served = this.servedTokens(raw);
    const accounts = this.accountsOf(served, startMs);
    const faults = this.faultsOf();
    const { ttlMs, evidence } = cacheTtl(raw);
    this.stats.requests = requests.length;
    this.stats.faults = faults.length;
    const workload: Workload = {
      accounts,
      requests,
      faults,
      sessionStarts: sessionStarts(raw),
      recordedPolicies: this.policies,
      cacheTtlMs: ttlMs,
      cacheTtlEvidence: evidence,
      startMs,
      endMs,
    };
    return { workload, actual, stats: this.stats };
  }

  /** Requests with their prompt shape; a request without usage takes its session's neighbour's (else the log's median). */
  private requestsOf(raw: readonly RawRequest[]): WorkloadRequest[] {
    const median = medianUsage(raw);
    const families = new Map<string | null, string | undefined>();
    const familyOf = (model: string | null) => {
      if (!families.has(model)) families.set(model, modelFamily(model ?? undefined));
      return families.get(model);
    };
    const lastOfSession = new Map<string, UsageRecord>();
    const nextOfSession = new Map<string, UsageRecord>();
    for (let i = raw.length - 1; i >= 0; i--) {
      const r = raw[i];
      if (r.session && r.usage) nextOfSession.set(r.session, r.usage);
    }
    return raw.map((r) => {
      let usage = r.usage;
      const estimated = usage === null;
      if (usage === null) {
        usage = (r.session && (lastOfSession.get(r.session) ?? nextOfSession.get(r.session))) || median;
        this.stats.usageEstimated++;
      } else if (r.session) {
        lastOfSession.set(r.session, usage);
      }
      return {
        atMs: r.atMs,
        requestId: r.requestId,
        session: r.session,
        model: r.model,
        modelFamily: familyOf(r.model),
        stream: r.stream,
        promptTokens: usage.inputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens,
        tailTokens: usage.inputTokens,
        outputTokens: usage.outputTokens,
        durationMs: r.durationMs,
        headMs: r.visibleAtMs - r.atMs,
        policyIndex: r.policyIndex,
        recordedServedBy: r.servedBy,
        usageEstimated: estimated,
        ...(r.auxiliary && { auxiliary: true }),
      };
    });
  }

  /** Per account, the tokens it served by the time their quota evidence arrived. */
  private servedTokens(raw: readonly RawRequest[]): Map<string, ServedTokens> {
    const out = new Map<string, ServedTokens>();
    for (const r of raw) {
      if (!r.servedBy || r.servedByFallback || !r.usage) continue;
      let s = out.get(r.servedBy);
      if (!s) out.set(r.servedBy, (s = new ServedTokens()));
      s.add(r.visibleAtMs, charged(r.usage));
    }
    return out;
  }

  private accountsOf(served: Map<string, ServedTokens>, startMs: number): WorkloadAccount[] {
    const none = new ServedTokens();
    const inferred = [...this.accounts.values()].map((a) => {
      const s = served.get(a.label) ?? none;
      const five = a.fallback ? null : inferAllowance(this.fiveHour.periods(a.label), s);
      const seven = a.fallback ? null : inferAllowance(this.sevenDay.periods(a.label), s);
      return { a, s, five, seven };
    });
    const fiveAssumed = medianOf(inferred.map((x) => x.five?.tokens)) ?? DEFAULT_FIVE_HOUR_LIMIT_TOKENS;
    const sevenAssumed = medianOf(inferred.map((x) => x.seven?.tokens)) ?? DEFAULT_SEVEN_DAY_LIMIT_TOKENS;
    const out = inferred.map(({ a, s, five, seven }): WorkloadAccount => {
      const fiveHourLimitTokens = five?.tokens ?? fiveAssumed;
      const sevenDayLimitTokens = seven?.tokens ?? sevenAssumed;
      const source: AllowanceSource = a.fallback ? 'given' : five && seven ? 'inferred' : 'assumed';
      const weekly = this.sevenDay.periods(a.label);
      const sevenDay = windowStart(weekly, s, startMs, SEVEN_DAY_MS, sevenDayLimitTokens);
      return {
        label: a.label,
        index: a.index,
        primary: a.primary,
        fallback: a.fallback,
        priority: a.priority,
        costTier: a.costTier,
        fiveHourLimitTokens,
        sevenDayLimitTokens,
        allowanceSource: source,
        allowanceEvidence: (five?.periods ?? 0) + (seven?.periods ?? 0),
        fiveHour: windowStart(this.fiveHour.periods(a.label), s, startMs, FIVE_HOUR_MS, fiveHourLimitTokens),
        sevenDay,
        weeklyResetSchedule: weekly.map((p) => p.resetAtMs).filter((t) => sevenDay.resetAtMs === null || t > sevenDay.resetAtMs),
      };
    });
    return out.sort((x, y) => Number(x.fallback) - Number(y.fallback) || x.index - y.index);
  }

  /** Each fault with the cooldown its account showed next (else the router's default for its kind). */
  private faultsOf(): TransientFault[] {
    return this.faults
      .map((f): TransientFault => {
        const answeredAt = f.atMs + f.answerMs;
        const seen = (this.cooling.get(f.account) ?? [])
          .filter((c) => c.atMs >= answeredAt && c.untilMs > answeredAt && (c.reason === undefined || c.reason === f.kind))
          .sort((a, b) => a.atMs - b.atMs)[0];
        const fallback = defaultCooldownMs(f.kind);
        // A cooldown seen much later than the longest this kind sets belongs to a later event.
        const cooldownMs = seen && seen.atMs - answeredAt <= Math.max(fallback, 15 * 60_000) ? seen.untilMs - answeredAt : fallback;
        return { account: this.label(f.account), atMs: f.atMs, answerMs: f.answerMs, kind: f.kind, cooldownMs, requestId: f.requestId };
      })
      .sort((a, b) => a.atMs - b.atMs);
  }
}

/** A recorded usage with every count a non-negative number, or null when there is none. */
function usageOf(u: UsageRecord | null | undefined): UsageRecord | null {
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
function charged(u: UsageRecord): number {
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
function windowStart(periods: readonly WindowPeriod[], served: ServedTokens, startMs: number, durationMs: number, limitTokens: number): WindowStart {
  const first = periods.reduce<WindowPeriod | undefined>((best, p) => (best === undefined || p.first.atMs < best.first.atMs ? p : best), undefined);
  if (!first || first.resetAtMs - durationMs > startMs) return { used: 0, resetAtMs: null };
  const before = served.between(startMs, first.first.atMs) / limitTokens;
  return { used: Math.max(0, first.first.used - before), resetAtMs: first.resetAtMs };
}

/** The median of the defined numbers, or undefined when there is none. */
function medianOf(values: ReadonlyArray<number | undefined>): number | undefined {
  const v = Float64Array.from(values.filter((x): x is number => x !== undefined)).sort();
  if (v.length === 0) return undefined;
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
}

/** The median of each usage field over the requests that recorded one (zeros when none did). */
function medianUsage(raw: readonly RawRequest[]): UsageRecord {
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
function cacheTtl(raw: readonly RawRequest[]): { ttlMs: number; evidence: string } {
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
function sessionStarts(raw: readonly RawRequest[]): SessionStart[] {
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
