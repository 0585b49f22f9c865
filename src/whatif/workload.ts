/**
 * The workload the what-if simulator replays: the requests that arrived (policy-independent),
 * the accounts with their starting quota state and allowances, the transient faults the upstream
 * answered with, and the policies the log was recorded under. Rebuilt from a decision log by
 * reconstruct.ts or made up by generate.ts. Times are epoch ms; token counts are tokens.
 * The model and its assumptions: docs/whatif.md.
 */
import type { RoutingPolicy } from '../routing/policy';

/** One window's state when the workload begins. */
export interface WindowStart {
  /** Utilisation, fraction 0–1 (may exceed 1). */
  used: number;
  /** Reset, epoch ms; null when the window has not started (it starts at the account's next served request). */
  resetAtMs: number | null;
}

/** Where an allowance figure came from. */
export type AllowanceSource = 'given' | 'inferred' | 'assumed';

/** One account of the pool. */
export interface WorkloadAccount {
  label: string;
  /** Position in the configured order. */
  index: number;
  /** The configured primary when the log was recorded. */
  primary: boolean;
  /** A pay-as-you-go fallback: no windows, tried after every other account. */
  fallback: boolean;
  /** `priority` and `cost-tier` from the account's configuration, when recorded (used by `weighted`). */
  priority?: number;
  costTier?: number;
  /** Tokens that fill the 5-hour window (100 %). */
  fiveHourLimitTokens: number;
  /** Tokens that fill the weekly window (100 %). */
  sevenDayLimitTokens: number;
  allowanceSource: AllowanceSource;
  /** Period pairs the allowance was inferred from (0 when given or assumed). */
  allowanceEvidence: number;
  fiveHour: WindowStart;
  sevenDay: WindowStart;
  /** Weekly resets known from the log after the starting one, epoch ms ascending: the schedule a rolled weekly window follows. */
  weeklyResetSchedule: number[];
}

/** One `/v1/messages` request. */
export interface WorkloadRequest {
  /** Arrival, epoch ms. */
  atMs: number;
  /** The router's request id (seeds the draw-based strategies, as live). */
  requestId: string;
  /** The sticky key's hash, or null (no session). */
  session: string | null;
  /** The requested model, or null. */
  model: string | null;
  /** The requested model's family (`sonnet`, …), or undefined. */
  modelFamily: string | undefined;
  /** The client asked for a stream. */
  stream: boolean;
  /** Whole prompt, tokens (input + cache creation + cache read as recorded). */
  promptTokens: number;
  /** The uncached tail of the prompt, tokens (recorded input). */
  tailTokens: number;
  outputTokens: number;
  /** Arrival to the end of the answer, ms: how long it holds an in-flight lease. */
  durationMs: number;
  /** Arrival to the serving answer's head, ms: until then the router does not see the tokens it counted. */
  headMs: number;
  /** Index into `Workload.recordedPolicies`: the policy it was recorded under. */
  policyIndex: number;
  /** The account that served it in the log (null: none served it, or a generated workload). */
  recordedServedBy: string | null;
  /** No usage was recorded (the request failed): its tokens were estimated from its session's neighbours. */
  usageEstimated: boolean;
  /** Not a conversation turn (recorded class `auxiliary` or `compaction`, src/routing/requestClass.ts): it never binds, as live. Absent: a turn. */
  auxiliary?: boolean;
}

/** Attempt results the simulator replays on the same account at the same time (each cools the account down). */
export type FaultKind = 'throttle' | 'overloaded' | 'server_error' | 'forbidden';

/** A transient failure the upstream answered with. */
export interface TransientFault {
  account: string;
  /** When it struck: the arrival of the request whose attempt met it, epoch ms. */
  atMs: number;
  kind: FaultKind;
  /** From the arrival to the failed answer, ms: the account cools down from then. */
  answerMs: number;
  /** How long the account cooled down after the answer, ms (as recorded, else the router's default for the kind). */
  cooldownMs: number;
  /** The request that met it, when recorded: of requests arriving in the same millisecond, it strikes that one. */
  requestId?: string;
}

/** A session's state at the start of the log: its warm prefix on the account that served it, its binding. */
export interface SessionStart {
  session: string;
  account: string;
  /** Tokens of the warm prefix (the first logged request's cache read); 0 for a binding only. */
  cachedTokens: number;
  /** Bound to `account` (affinity placed it there). */
  bound: boolean;
  atMs: number;
}

export interface Workload {
  /** Non-fallback accounts first in configured order, then fallbacks. */
  accounts: WorkloadAccount[];
  /** In arrival order. */
  requests: WorkloadRequest[];
  /** In time order. */
  faults: TransientFault[];
  sessionStarts: SessionStart[];
  /** The policies the log was recorded under (one per distinct policy), indexed by `WorkloadRequest.policyIndex`. */
  recordedPolicies: RoutingPolicy[];
  /** Prompt-cache lifetime after a prefix's last use, ms. */
  cacheTtlMs: number;
  /** Why that lifetime (`default` or what the log showed). */
  cacheTtlEvidence: string;
  /** First arrival and last answer's end, epoch ms. */
  startMs: number;
  endMs: number;
}
