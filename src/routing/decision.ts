/**
 * The decision record: one JSON object per request, appended to
 * `decisions.jsonl`. The UI, `/status`, `report` and `replay` all read it.
 * Schema version 2, field by field in docs/decision-record.md; version 1 lines are read
 * through `readDecisionRecord` (decisionRead.ts).
 *
 * JSON has no Infinity, so "+∞" times (no reset, no cooldown) are recorded as
 * `null` and restored by `metricsFromRecord`.
 */
import type { TokensByKind } from '../quota/learnedCosts';
import type { StickyKeySource, StickyKind } from './identify';
import type { AccountMetrics } from './metrics';
import type { RoutingPolicy } from './policy';
import type { AffinityOutcome, CandidateVerdict, DecidingStage, ProbeOutcome, RoutePlan, SelectionReason, SpillOutcome, StrategyInputs } from './plan';
import type { FilterVerdict } from './planner/verdict';
import { unitSourceOf, type RequestClass, type UnitSource } from './requestClass';

/** Metrics as stored: Infinity-valued fields become null. */
export type RecordedMetrics = Omit<AccountMetrics, 'coolingUntilMs' | 'sessionResetMs' | 'weeklyResetMs' | 'sessionResetBucket' | 'scopedResetMs'> & {
  coolingUntilMs: number | null;
  sessionResetMs: number | null;
  weeklyResetMs: number | null;
  sessionResetBucket: number | null;
  scopedResetMs: number | null;
};

/** One candidate as recorded. */
export interface RecordedCandidate extends Omit<CandidateVerdict, 'filter'> {
  /** The filter's verdict code with its figures (absent in records written before the planner stages). */
  filter?: FilterVerdict;
  /** Insertion (configured) order. */
  index: number;
  primary: boolean;
  fallback: boolean;
  inflight: number;
  metrics: RecordedMetrics;
}

/** One upstream attempt. */
export interface AttemptRecord {
  account: string;
  /** HTTP status from upstream, or 0 when no response arrived. */
  status: number;
  /** Classification (`success`, `window_exhausted`, `throttle`, …, `network_error`, `stream_error`). */
  result: string;
  /** Time to the upstream response head, ms. */
  ms: number;
}

/** One wait of a request, in the waiting room (docs/routing.md#waiting). */
export interface WaitRecord {
  /**
   * Why it waited: `blip` — its session's bound account paused for a transient cooldown ending within
   * `session-affinity-blip-wait-ms`; `same_account_retry` — the account it tried answered a short throttle;
   * `transient` — no account could serve and the first to recover only paused (a throttle, an overload, server errors);
   * `bound_room` — its session's bound account had no room (concurrency limit or cap) and the session had nothing in flight there.
   */
  why: string;
  /** The account whose recovery it waited for. */
  account: string;
  /** How long it waited, ms. */
  ms: number;
  /** How the wait ended: `woken` (released), `deadline`, `client_gone`, or `refused` (the waiting room was full: it did not wait). */
  end: string;
}

/** Token usage reported by the serving account. */
export interface UsageRecord {
  inputTokens: number;
  outputTokens: number;
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
}

/** A usage record's tokens by kind (cache creation = cache writes), as the learned costs and reservations count them. */
export function usageTokens(u: UsageRecord): TokensByKind {
  return { inputTokens: u.inputTokens, cacheReadTokens: u.cacheReadInputTokens, cacheWriteTokens: u.cacheCreationInputTokens, outputTokens: u.outputTokens };
}

/** How the request ended, as the client saw it. */
export const DECISION_OUTCOMES = ['success', 'client_error', 'upstream_error', 'no_usable_account', 'truncated', 'error_after_commit', 'client_abort'] as const;
export type DecisionOutcome = (typeof DECISION_OUTCOMES)[number];

export interface DecisionRecord {
  schemaVersion: 2;
  /** ISO-8601 time the request arrived. */
  ts: string;
  requestId: string;
  /** Where the sticky key came from; `unknown` only in a version 1 record read by `readDecisionRecord`. */
  stickyKeySource: StickyKeySource | 'unknown';
  stickyKind: StickyKind;
  /** First 16 lowercase hex digits of SHA-256 of the sticky key; null when there is none. Never the key itself. */
  stickyKeyHash: string | null;
  /**
   * What the request is, from Claude Code's `x-claude-code-request-class` (src/routing/requestClass.ts):
   * `main`, `subagent`, `compaction` or `auxiliary`; a missing or unknown value is `main`. Absent in
   * lines written before it (read it with `recordedRequestClass`: absent is `main`) and on warm-ups.
   */
  requestClass?: RequestClass;
  /** Hash of `x-claude-code-prompt-id` (16 hex digits, as `stickyKeyHash`), null without one. Absent in older lines. */
  promptIdHash?: string | null;
  /** Hash of `x-claude-code-agent-id` (a sub-agent's requests carry it), null without one. Absent in older lines. */
  agentIdHash?: string | null;
  /** The request carried `x-claude-code-context-compacted` (the first request after a compaction). Absent in older lines. */
  contextCompacted?: boolean;
  /** The affinity unit's key (a hash; for now the session's, equal to `stickyKeyHash`), null without one. Absent in older lines. */
  unitKey?: string | null;
  /** Which header or field gave the unit its key (`x-claude-code-session-id`, `metadata.user_id`, `fingerprint`, `none`). Absent in older lines. */
  unitSource?: UnitSource;
  path: string;
  model: string | null;
  stream: boolean;
  strategy: RoutingPolicy['strategy'];
  ranking: RoutingPolicy['accountRanking'];
  policy: {
    ranking: RoutingPolicy['accountRanking'];
    preferPrimary: boolean;
    sessionAffinity: boolean;
    sessionAffinityIdleTtlMs: number;
    spillInflight: number;
    /** False when `CLAUDE_ROUTER_QUOTA_ROUTING=off` (the ranking order is then configured order). */
    quotaRouting: boolean;
  };
  selectionReason: SelectionReason;
  /** The planner stage that decided the first account (absent in records written before the planner stages). */
  decidedBy?: DecidingStage;
  /** A non-default strategy's further inputs, so `replay` can plan the request again (absent for fill-first). */
  strategyInputs?: StrategyInputs;
  rankingOrder: string[];
  candidates: RecordedCandidate[];
  affinity: AffinityOutcome;
  spill: SpillOutcome | null;
  /** Set when the first account was tried as a probe (docs/routing.md#recovery-probes); absent otherwise. */
  probe?: ProbeOutcome;
  policyError: string | null;
  /** Non-fallback accounts usable when the request was planned. */
  usableAccounts: number;
  servedBy: string | null;
  servedByFallback: boolean;
  attempts: AttemptRecord[];
  /** The request's waits, in order; absent when it never waited. */
  waits?: WaitRecord[];
  /** Set on the router's own limit warm-up request (docs/routing.md#limit-warm-up): not client traffic, so the what-if reconstruction skips it. Absent otherwise. */
  warmUp?: { window: string };
  outcome: DecisionOutcome;
  status: number;
  usage: UsageRecord | null;
  durationMs: number;
}

const INFINITE_FIELDS = ['coolingUntilMs', 'sessionResetMs', 'weeklyResetMs', 'sessionResetBucket', 'scopedResetMs'] as const;

/** AccountMetrics → RecordedMetrics (Infinity → null). */
export function metricsToRecord(m: AccountMetrics): RecordedMetrics {
  const fin = (v: number) => (Number.isFinite(v) ? v : null);
  return {
    usable: m.usable,
    unusableReason: m.unusableReason,
    coolingUntilMs: fin(m.coolingUntilMs),
    freshness: m.freshness,
    quotaEvidenceRank: m.quotaEvidenceRank,
    sessionUsed: m.sessionUsed,
    weeklyUsed: m.weeklyUsed,
    sessionResetMs: fin(m.sessionResetMs),
    weeklyResetMs: fin(m.weeklyResetMs),
    sessionResetBucket: fin(m.sessionResetBucket),
    weeklyUsedForSort: m.weeklyUsedForSort,
    hardSaturated: m.hardSaturated,
    softSaturated: m.softSaturated,
    sessionSaturated: m.sessionSaturated,
    hasScopedWindow: m.hasScopedWindow,
    scopedUsed: m.scopedUsed,
    scopedResetMs: fin(m.scopedResetMs),
    scopedSaturated: m.scopedSaturated,
    scopedRejected: m.scopedRejected,
    overageEligible: m.overageEligible,
    headroom: m.headroom,
  };
}

/** RecordedMetrics → AccountMetrics (null → Infinity). */
export function metricsFromRecord(r: RecordedMetrics): AccountMetrics {
  const out: Record<string, unknown> = { ...r };
  for (const k of INFINITE_FIELDS) out[k] = r[k] === null || r[k] === undefined ? Infinity : r[k];
  return out as unknown as AccountMetrics;
}

/**
 * What is known of a request before it is planned (the record's head). The hint facts (class,
 * prompt and agent id hashes, compaction flag) may be left out: then `main`, null, null, false.
 */
export type RequestFacts = Pick<
  DecisionRecord,
  'ts' | 'requestId' | 'stickyKeySource' | 'stickyKind' | 'stickyKeyHash' | 'requestClass' | 'promptIdHash' | 'agentIdHash' | 'contextCompacted' | 'path' | 'model' | 'stream'
>;

/** How a request ended (the record's tail). */
export type OutcomeFacts = Pick<DecisionRecord, 'servedBy' | 'servedByFallback' | 'attempts' | 'waits' | 'outcome' | 'status' | 'usage' | 'durationMs'>;

/** The policy values a decision depended on, as the record keeps them (`DecisionRecord.policy`). */
export function policyFacts(policy: RoutingPolicy): DecisionRecord['policy'] {
  return {
    ranking: policy.accountRanking,
    preferPrimary: policy.preferPrimary,
    sessionAffinity: policy.sessionAffinity,
    sessionAffinityIdleTtlMs: policy.sessionAffinityIdleTtlMs,
    spillInflight: policy.spillInflight,
    quotaRouting: policy.quotaRouting,
  };
}

/**
 * The decision record of one request: its facts, the plan it ran under and its outcome.
 * One object literal with explicit fields, in schema order — this runs on every request,
 * where a spread is the slow part (docs/performance.md).
 */
export function buildDecisionRecord(req: RequestFacts, plan: RoutePlan, policy: RoutingPolicy, out: OutcomeFacts): DecisionRecord {
  return {
    schemaVersion: 2,
    ts: req.ts,
    requestId: req.requestId,
    stickyKeySource: req.stickyKeySource,
    stickyKind: req.stickyKind,
    stickyKeyHash: req.stickyKeyHash,
    requestClass: req.requestClass ?? 'main',
    promptIdHash: req.promptIdHash ?? null,
    agentIdHash: req.agentIdHash ?? null,
    contextCompacted: req.contextCompacted ?? false,
    // For now the affinity unit is the session.
    unitKey: req.stickyKeyHash,
    unitSource: unitSourceOf(req.stickyKeySource),
    path: req.path,
    model: req.model,
    stream: req.stream,
    strategy: policy.strategy,
    ranking: policy.accountRanking,
    policy: policyFacts(policy),
    selectionReason: plan.selectionReason,
    decidedBy: plan.decidedBy,
    strategyInputs: plan.strategyInputs,
    rankingOrder: plan.rankingOrder,
    candidates: recordCandidates(plan),
    affinity: plan.affinity,
    spill: plan.spill,
    probe: plan.probe,
    policyError: plan.policyError,
    usableAccounts: countUsable(plan),
    servedBy: out.servedBy,
    servedByFallback: out.servedByFallback,
    attempts: out.attempts,
    waits: out.waits,
    outcome: out.outcome,
    status: out.status,
    usage: out.usage,
    durationMs: out.durationMs,
  };
}

/** Every candidate with its verdict; plan.verdicts is in plan.order's order (one per account). */
function recordCandidates(plan: RoutePlan): RecordedCandidate[] {
  const verdicts = plan.verdicts;
  const out = new Array<RecordedCandidate>(plan.order.length);
  for (let i = 0; i < plan.order.length; i++) {
    const a = plan.order[i];
    out[i] = {
      account: a.id,
      rank: verdicts[i].rank,
      verdict: verdicts[i].verdict,
      reason: verdicts[i].reason,
      filter: verdicts[i].filter,
      // Always present (undefined unless `forecast` planned): a spread here made every candidate a slow object.
      forecast: verdicts[i].forecast,
      index: a.index,
      primary: a.isPrimary,
      fallback: a.fallback,
      inflight: a.inflight,
      metrics: metricsToRecord(a.metrics),
    };
  }
  return out;
}

/** Non-fallback accounts usable when the request was planned. */
function countUsable(plan: RoutePlan): number {
  let n = 0;
  for (const a of plan.order) if (!a.fallback && a.metrics.usable) n++;
  return n;
}
