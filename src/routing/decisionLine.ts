/**
 * The decision record as one line of JSON, written member by member.
 *
 * The text is exactly what `JSON.stringify(record)` gives for a record in schema order (as
 * `buildDecisionRecord` makes it): the same members in the same order, `undefined` members left
 * out, non-finite numbers as `null`. It is written by hand because it runs on every request and
 * the generic serialiser is the proxy's largest own cost there (docs/performance.md);
 * most of a record is its candidates' metrics, and an account's metrics rarely change from one
 * request to the next, so each account's last metrics text — and its whole candidate's text — is
 * reused while they stay equal.
 */
import type { AffinityOutcome, ProbeOutcome, SpillOutcome } from './plan';
import type { FilterVerdict } from './planner/verdict';
import type { AttemptRecord, DecisionRecord, RecordedCandidate, RecordedMetrics, UsageRecord } from './decision';

/** Accounts whose last metrics text is kept; past this the memory starts over (accounts come and go with configurations). */
const MAX_ACCOUNTS = 256;

export class DecisionLineEncoder {
  /** Per account: the metrics it was last written with, and their text. */
  private readonly lastMetrics = new Map<string, { metrics: RecordedMetrics; text: string }>();
  /** Per account: its last candidate's text and what it was written from (only candidates without forecast figures). */
  private readonly lastCandidate = new Map<string, LastCandidate>();

  /** The record as JSON, without a trailing newline. Never throws for a well-typed record. */
  encode(r: DecisionRecord): string {
    return (
      `{"schemaVersion":${num(r.schemaVersion)},"ts":${str(r.ts)},"requestId":${str(r.requestId)},"stickyKeySource":${str(r.stickyKeySource)}` +
      `,"stickyKind":${str(r.stickyKind)},"stickyKeyHash":${strOrNull(r.stickyKeyHash)}${hints(r)}` +
      `,"path":${str(r.path)},"model":${strOrNull(r.model)},"stream":${r.stream},"strategy":${str(r.strategy)},"ranking":${str(r.ranking)}` +
      `,"policy":{"ranking":${str(r.policy.ranking)},"preferPrimary":${r.policy.preferPrimary},"sessionAffinity":${r.policy.sessionAffinity}` +
      `,"sessionAffinityIdleTtlMs":${num(r.policy.sessionAffinityIdleTtlMs)},"spillInflight":${num(r.policy.spillInflight)},"quotaRouting":${r.policy.quotaRouting}}` +
      `,"selectionReason":${str(r.selectionReason)}${r.decidedBy === undefined ? '' : `,"decidedBy":${str(r.decidedBy)}`}` +
      // Only non-default strategies carry it: small, and rare enough for the generic serialiser.
      `${r.strategyInputs === undefined ? '' : `,"strategyInputs":${JSON.stringify(r.strategyInputs)}`},"rankingOrder":${strings(r.rankingOrder)},"candidates":${this.candidates(r.candidates)}` +
      `,"affinity":${affinity(r.affinity)},"spill":${spill(r.spill)}${r.probe === undefined ? '' : `,"probe":${probe(r.probe)}`},"policyError":${strOrNull(r.policyError)},"usableAccounts":${num(r.usableAccounts)}` +
      `,"servedBy":${strOrNull(r.servedBy)},"servedByFallback":${r.servedByFallback},"attempts":${attempts(r.attempts)}` +
      // Only a request that waited carries it: rare enough for the generic serialiser.
      `${r.waits === undefined ? '' : `,"waits":${JSON.stringify(r.waits)}`}${r.warmUp === undefined ? '' : `,"warmUp":{"window":${str(r.warmUp.window)}}`}` +
      `,"outcome":${str(r.outcome)},"status":${num(r.status)},"usage":${usage(r.usage)},"durationMs":${num(r.durationMs)}}`
    );
  }

  private candidates(list: readonly RecordedCandidate[]): string {
    let out = '[';
    for (let i = 0; i < list.length; i++) {
      if (i > 0) out += ',';
      out += this.candidate(list[i]);
    }
    return `${out}]`;
  }

  /** One candidate's text: the account's last one again when every member is the same (most are, request after request). */
  private candidate(c: RecordedCandidate): string {
    const filter = c.filter === undefined ? undefined : filterText(c.filter);
    const metrics = this.metrics(c.account, c.metrics);
    const last = this.lastCandidate.get(c.account);
    if (
      last !== undefined &&
      c.forecast === undefined &&
      last.metrics === metrics &&
      last.filter === filter &&
      last.rank === c.rank &&
      last.verdict === c.verdict &&
      last.reason === c.reason &&
      last.index === c.index &&
      last.primary === c.primary &&
      last.fallback === c.fallback &&
      last.inflight === c.inflight
    )
      return last.text;
    const text =
      `{"account":${str(c.account)},"rank":${num(c.rank)},"verdict":${str(c.verdict)},"reason":${str(c.reason)}${filter === undefined ? '' : `,"filter":${filter}`}` +
      `${c.forecast === undefined ? '' : `,"forecast":${JSON.stringify(c.forecast)}`}` +
      `,"index":${num(c.index)}` +
      `,"primary":${c.primary},"fallback":${c.fallback},"inflight":${num(c.inflight)},"metrics":${metrics}}`;
    if (c.forecast !== undefined) return text;
    if (!last && this.lastCandidate.size >= MAX_ACCOUNTS) this.lastCandidate.clear();
    const { rank, verdict, reason, index, primary, fallback, inflight } = c;
    this.lastCandidate.set(c.account, { text, metrics, filter, rank, verdict, reason, index, primary, fallback, inflight });
    return text;
  }

  private metrics(account: string, m: RecordedMetrics): string {
    const last = this.lastMetrics.get(account);
    if (last && sameMetrics(last.metrics, m)) return last.text;
    const text = metricsText(m);
    if (!last && this.lastMetrics.size >= MAX_ACCOUNTS) this.lastMetrics.clear();
    this.lastMetrics.set(account, { metrics: m, text });
    return text;
  }
}

/** A candidate's text and the members it was written from (its filter and metrics as their texts). */
interface LastCandidate {
  text: string;
  metrics: string;
  filter: string | undefined;
  rank: number;
  verdict: string;
  reason: string;
  index: number;
  primary: boolean;
  fallback: boolean;
  inflight: number;
}

function metricsText(m: RecordedMetrics): string {
  return (
    `{"usable":${m.usable}${m.unusableReason === undefined ? '' : `,"unusableReason":${str(m.unusableReason)}`}` +
    `,"coolingUntilMs":${numOrNull(m.coolingUntilMs)},"freshness":${str(m.freshness)},"quotaEvidenceRank":${num(m.quotaEvidenceRank)}` +
    `,"sessionUsed":${numOrNull(m.sessionUsed)},"weeklyUsed":${numOrNull(m.weeklyUsed)},"sessionResetMs":${numOrNull(m.sessionResetMs)}` +
    `,"weeklyResetMs":${numOrNull(m.weeklyResetMs)},"sessionResetBucket":${numOrNull(m.sessionResetBucket)},"weeklyUsedForSort":${num(m.weeklyUsedForSort)}` +
    `,"hardSaturated":${m.hardSaturated},"softSaturated":${m.softSaturated},"sessionSaturated":${m.sessionSaturated}` +
    `,"hasScopedWindow":${m.hasScopedWindow},"scopedUsed":${numOrNull(m.scopedUsed)},"scopedResetMs":${numOrNull(m.scopedResetMs)}` +
    `,"scopedSaturated":${m.scopedSaturated},"scopedRejected":${m.scopedRejected},"overageEligible":${m.overageEligible},"headroom":${numOrNull(m.headroom)}}`
  );
}

/** Every member the text shows is equal (`===`; the metrics hold only numbers, booleans, strings and null). */
function sameMetrics(a: RecordedMetrics, b: RecordedMetrics): boolean {
  return (
    a === b ||
    (a.usable === b.usable &&
      a.unusableReason === b.unusableReason &&
      a.coolingUntilMs === b.coolingUntilMs &&
      a.freshness === b.freshness &&
      a.quotaEvidenceRank === b.quotaEvidenceRank &&
      a.sessionUsed === b.sessionUsed &&
      a.weeklyUsed === b.weeklyUsed &&
      a.sessionResetMs === b.sessionResetMs &&
      a.weeklyResetMs === b.weeklyResetMs &&
      a.sessionResetBucket === b.sessionResetBucket &&
      a.weeklyUsedForSort === b.weeklyUsedForSort &&
      a.hardSaturated === b.hardSaturated &&
      a.softSaturated === b.softSaturated &&
      a.sessionSaturated === b.sessionSaturated &&
      a.hasScopedWindow === b.hasScopedWindow &&
      a.scopedUsed === b.scopedUsed &&
      a.scopedResetMs === b.scopedResetMs &&
      a.scopedSaturated === b.scopedSaturated &&
      a.scopedRejected === b.scopedRejected &&
      a.overageEligible === b.overageEligible &&
      a.headroom === b.headroom)
  );
}

/** A filter verdict: its code, then its figures in the order the filter builds them. */
function filterText(v: FilterVerdict): string {
  switch (v.code) {
    case 'eligible':
      return '{"code":"eligible"}';
    case 'needs_sign_in':
      return '{"code":"needs_sign_in"}';
    case 'disabled':
      return '{"code":"disabled"}';
    case 'soft_limit':
      return `{"code":"soft_limit","used":${num(v.used)},"resetMs":${numOrNull(v.resetMs)}}`;
    case 'over_cap':
      return `{"code":"over_cap","inflight":${num(v.inflight)},"cap":${num(v.cap)}}`;
    case 'cooling':
      return `{"code":"cooling","reason":${str(v.reason)},"untilMs":${numOrNull(v.untilMs)}}`;
    case 'recovery_probe':
      return `{"code":"recovery_probe","untilMs":${numOrNull(v.untilMs)}}`;
    case 'window_exhausted':
      return `{"code":"window_exhausted","window":${str(v.window)},"resetMs":${numOrNull(v.resetMs)}}`;
    case 'scoped_exhausted':
      return `{"code":"scoped_exhausted","family":${str(v.family)},"resetMs":${numOrNull(v.resetMs)}}`;
    case 'over_sticky_threshold':
      return `{"code":"over_sticky_threshold","window":${str(v.window)},"used":${num(v.used)},"threshold":${num(v.threshold)}}`;
  }
}

/** The hint members (class, id hashes, compaction flag, unit), each left out when undefined, as JSON.stringify does. */
function hints(r: DecisionRecord): string {
  return (
    `${r.requestClass === undefined ? '' : `,"requestClass":${str(r.requestClass)}`}` +
    `${r.promptIdHash === undefined ? '' : `,"promptIdHash":${strOrNull(r.promptIdHash)}`}` +
    `${r.agentIdHash === undefined ? '' : `,"agentIdHash":${strOrNull(r.agentIdHash)}`}` +
    `${r.contextCompacted === undefined ? '' : `,"contextCompacted":${r.contextCompacted}`}` +
    `${r.unitKey === undefined ? '' : `,"unitKey":${strOrNull(r.unitKey)}`}` +
    `${r.unitSource === undefined ? '' : `,"unitSource":${str(r.unitSource)}`}`
  );
}

function affinity(a: AffinityOutcome): string {
  return `{"sessionBound":${a.sessionBound},"boundAccount":${strOrNull(a.boundAccount)},"applied":${a.applied},"skippedReason":${strOrNull(a.skippedReason)}}`;
}

function spill(s: SpillOutcome | null): string {
  return s === null ? 'null' : `{"from":${str(s.from)},"to":${str(s.to)},"inflight":${num(s.inflight)}}`;
}

function probe(p: ProbeOutcome): string {
  return `{"account":${str(p.account)},"kind":${str(p.kind)}}`;
}

function attempts(list: readonly AttemptRecord[]): string {
  let out = '[';
  for (let i = 0; i < list.length; i++) {
    const a = list[i];
    out += `${i > 0 ? ',' : ''}{"account":${str(a.account)},"status":${num(a.status)},"result":${str(a.result)},"ms":${num(a.ms)}}`;
  }
  return `${out}]`;
}

function usage(u: UsageRecord | null): string {
  return u === null
    ? 'null'
    : `{"inputTokens":${num(u.inputTokens)},"outputTokens":${num(u.outputTokens)},"cacheCreationInputTokens":${num(u.cacheCreationInputTokens)},"cacheReadInputTokens":${num(u.cacheReadInputTokens)}}`;
}

function strings(list: readonly string[]): string {
  let out = '[';
  for (let i = 0; i < list.length; i++) out += (i > 0 ? ',' : '') + str(list[i]);
  return `${out}]`;
}

/** A string as JSON (quoted and escaped, as JSON.stringify does it). */
const str = (s: string): string => JSON.stringify(s);
const strOrNull = (s: string | null): string => (s === null ? 'null' : JSON.stringify(s));
/** A number as JSON: non-finite numbers are `null`, as in JSON.stringify. */
const num = (n: number): string => (Number.isFinite(n) ? String(n) : 'null');
const numOrNull = (n: number | null): string => (n === null ? 'null' : num(n));
