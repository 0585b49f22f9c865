/**
 * A decision log → the workload it records (workload.ts) and the report of what actually
 * happened, one record at a time: a log of any length is read once and never held whole
 * (only a compact entry per request, logRequests.ts). Pure. The rules: docs/whatif.md#reconstruction.
 */
import { modelFamily } from '../quota/family';
import { isAuxiliaryClass, recordedRequestClass } from '../routing/requestClass';
import type { DecisionRecord, UsageRecord } from '../routing/decision';
import { recordedPolicy } from '../routing/recordedPolicy';
import { observeWeeklyWindows, ReportBuilder, reportEntry, type PolicyReport, type ReportEntry } from '../routing/report';
import type { RoutingPolicy } from '../routing/policy';
import { WindowPeriods } from '../routing/weeklyResets';
import { DEFAULT_FIVE_HOUR_LIMIT_TOKENS, DEFAULT_SEVEN_DAY_LIMIT_TOKENS, FIVE_HOUR_MS, SEVEN_DAY_MS } from '../sim/windows';
import { inferAllowance, ServedTokens } from './allowance';
import { defaultCooldownMs, faultKindOf } from './faults';
import type { AllowanceSource, FaultKind, TransientFault, Workload, WorkloadAccount, WorkloadRequest } from './workload';
import { cacheTtl, charged, medianOf, medianUsage, sessionStarts, usageOf, windowStart, type RawRequest } from './logRequests';

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
