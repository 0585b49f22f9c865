/**
 * Hand-made workloads for the simulator's tests: every figure they produce is known by
 * construction. Times are relative to T0; sizes in tokens.
 */
import { DEFAULT_POLICY, type RoutingPolicy } from '../../src/routing/policy';
import type { SimPolicy } from '../../src/whatif/simulate';
import type { Workload, WorkloadAccount, WorkloadRequest } from '../../src/whatif/workload';

export const T0 = Date.UTC(2025, 5, 2, 9, 0, 0);
export const SEC = 1_000;
export const MIN = 60 * SEC;
export const HOUR = 60 * MIN;
export const DAY = 24 * HOUR;

/** An account with large windows that have not started, and a weekly reset `weeklyResetIn` after T0. */
export function account(label: string, index: number, over: Partial<WorkloadAccount> = {}): WorkloadAccount {
  return {
    label,
    index,
    primary: false,
    fallback: false,
    fiveHourLimitTokens: 10_000_000,
    sevenDayLimitTokens: 100_000_000,
    allowanceSource: 'given',
    allowanceEvidence: 0,
    fiveHour: { used: 0, resetAtMs: null },
    sevenDay: { used: 0, resetAtMs: T0 + (index + 1) * DAY },
    weeklyResetSchedule: [],
    ...over,
  };
}

/** A request at T0 + `at` ms. */
export function request(at: number, session: string | null, over: Partial<WorkloadRequest> = {}): WorkloadRequest {
  return {
    atMs: T0 + at,
    requestId: `req_${at}_${session ?? 'none'}`,
    session,
    model: 'claude-sonnet-4-5-20250929',
    modelFamily: 'sonnet',
    stream: true,
    promptTokens: 1_000,
    tailTokens: 100,
    outputTokens: 100,
    durationMs: 1_000,
    headMs: 0,
    policyIndex: 0,
    recordedServedBy: null,
    usageEstimated: false,
    ...over,
  };
}

/**
 * One session of `turns` requests `everyMs` apart whose prompt grows by `growth` tokens a turn:
 * turn k's prompt is `first + k × growth`, its uncached tail `tail`.
 */
export function session(id: string, turns: number, everyMs: number, opts: { startAt?: number; first?: number; growth?: number; tail?: number } = {}): WorkloadRequest[] {
  const { startAt = 0, first = 10_000, growth = 1_000, tail = 500 } = opts;
  return Array.from({ length: turns }, (_, k) => request(startAt + k * everyMs, id, { promptTokens: first + k * growth, tailTokens: tail }));
}

export function workload(accounts: WorkloadAccount[], requests: WorkloadRequest[], over: Partial<Workload> = {}): Workload {
  const sorted = [...requests].sort((a, b) => a.atMs - b.atMs);
  return {
    accounts,
    requests: sorted,
    faults: [],
    sessionStarts: [],
    recordedPolicies: [DEFAULT_POLICY],
    cacheTtlMs: 5 * MIN,
    cacheTtlEvidence: 'test',
    startMs: sorted[0].atMs,
    endMs: Math.max(...sorted.map((r) => r.atMs + r.durationMs)),
    ...over,
  };
}

/** A policy to simulate: the defaults with `over`. */
export function policy(over: Partial<RoutingPolicy> = {}, name = 'test'): SimPolicy {
  return { name, policy: { ...DEFAULT_POLICY, ...over } };
}
