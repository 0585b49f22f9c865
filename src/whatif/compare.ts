/**
 * Policies compared on one workload: the log's own policy replayed first — checked against what
 * the log shows actually happened (its calibration) — then each policy asked for. Pure.
 * How to read the result: docs/whatif.md#reading-the-table.
 */
import type { PolicyReport } from '../routing/report';
import { describePolicy, nameOf, samePolicy } from './policies';
import { simulate, type SimPolicy, type SimulationResult } from './simulate';
import type { Workload } from './workload';

/** Relative part of the calibration tolerance: ±10 % of the actual figure (the bar for the recorded policy). */
export const CALIBRATION_TOLERANCE_FRACTION = 0.1;
/** Absolute part: ±2, for small counts. The larger of the two applies. */
export const CALIBRATION_TOLERANCE_ABSOLUTE = 2;

/** The tolerance in words: `±10 % or ±2` (within it), `±10 % and ±2` (off by more than both). */
export function toleranceText(join: 'or' | 'and'): string {
  return `±${CALIBRATION_TOLERANCE_FRACTION * 100} % ${join} ±${CALIBRATION_TOLERANCE_ABSOLUTE}`;
}

/** One figure of the calibration. */
export interface CalibrationFigure {
  metric: 'mid-session switches' | 'cache-creation tokens' | 'refused requests';
  simulated: number;
  actual: number;
  /** (simulated − actual) / actual, fraction; null when actual is 0. */
  error: number | null;
  /** Within ±10 % or ±2 of the actual figure, whichever is larger. */
  within: boolean;
}

/** How far the replay of the log's own policy is from what actually happened. */
export interface Calibration {
  figures: CalibrationFigure[];
  /** Every figure within tolerance. */
  ok: boolean;
}

/** A compared policy's result. */
export interface PolicyResult extends SimulationResult {
  /** The policy in a few words. */
  description: string;
  /** It is the policy the log was recorded under. */
  recorded: boolean;
}

export interface Comparison {
  /** What the log shows happened (its `/v1/messages` decisions). */
  actual: PolicyReport;
  /** The log's own policy (each request under the policy it was recorded under), replayed. */
  recorded: PolicyResult;
  /** The policies asked for, in the order asked; one equal to the recorded policy is its replay, marked `recorded`. */
  results: PolicyResult[];
  calibration: Calibration;
}

/** Requests the router refused for want of a usable account. */
export function refusedOf(r: PolicyReport): number {
  return r.byOutcome.no_usable_account ?? 0;
}

/** The calibration of a replay of the recorded policy against the actual report. */
export function calibrate(simulated: PolicyReport, actual: PolicyReport): Calibration {
  const figure = (metric: CalibrationFigure['metric'], sim: number, act: number): CalibrationFigure => ({
    metric,
    simulated: sim,
    actual: act,
    error: act === 0 ? null : (sim - act) / act,
    within: Math.abs(sim - act) <= Math.max(CALIBRATION_TOLERANCE_ABSOLUTE, CALIBRATION_TOLERANCE_FRACTION * Math.abs(act)),
  });
  const figures = [
    figure('mid-session switches', simulated.midSessionSwitches, actual.midSessionSwitches),
    figure('cache-creation tokens', simulated.cacheCreationTokens, actual.cacheCreationTokens),
    figure('refused requests', refusedOf(simulated), refusedOf(actual)),
  ];
  return { figures, ok: figures.every((f) => f.within) };
}

/**
 * Replays the recorded policy and each of `policies` over `workload`.
 * @param actual the report of what the log shows happened
 * @param onDone called after each replay (progress: replays done, replays in all)
 */
export function compare(workload: Workload, actual: PolicyReport, policies: readonly SimPolicy[], onDone?: (done: number, total: number) => void): Comparison {
  const single = workload.recordedPolicies.length === 1 ? workload.recordedPolicies[0] : undefined;
  const recordedName = single ? nameOf(single) : 'as recorded';
  const recordedDescription = single ? describePolicy(single) : `as recorded (${workload.recordedPolicies.length} policies over time, each request under its own)`;
  const isRecorded = (p: SimPolicy) => p.policy === 'recorded' || (single !== undefined && samePolicy(p.policy, single));
  const total = 1 + policies.filter((p) => !isRecorded(p)).length;
  let done = 0;
  const run = (p: SimPolicy): SimulationResult => {
    const r = simulate(workload, p);
    onDone?.(++done, total);
    return r;
  };
  const recordedRun = run({ name: recordedName, policy: 'recorded' });
  const recorded: PolicyResult = { ...recordedRun, description: recordedDescription, recorded: true };
  const results = policies.map((p): PolicyResult => {
    if (isRecorded(p)) return { ...recorded, name: p.name };
    return { ...run(p), description: describePolicy(p.policy as Exclude<SimPolicy['policy'], 'recorded'>), recorded: false };
  });
  return { actual, recorded, results, calibration: calibrate(recorded.report, actual) };
}
