/**
 * A synthetic workload of a stated shape — accounts with staggered weekly resets and limited
 * allowances, sessions of varied length and cadence whose prompts grow turn by turn, bursts of
 * short parallel sessions, transient throttles — and the decision log a policy would have written
 * for it (the simulator under that policy, each decision built by the router's own
 * `buildDecisionRecord`). For tests, benchmarks and policy comparisons in virtual time. Pure and
 * seeded: the same shape gives the same workload.
 */
import { modelFamily } from '../quota/family';
import type { DecisionRecord } from '../routing/decision';
import { seededRandom } from '../routing/planner/random';
import type { RoutingPolicy } from '../routing/policy';
import { FIVE_HOUR_MS, SEVEN_DAY_MS } from '../sim/windows';
import { nameOf } from './policies';
import { DEFAULT_CACHE_TTL_MS } from './logRequests';
import { simulate, type SimulationResult } from './simulate';
import type { TransientFault, Workload, WorkloadAccount, WorkloadRequest } from './workload';

/** An inclusive range [min, max]; a value is drawn uniformly from it. */
export type Range = readonly [number, number];

/** One account of a generated pool. */
export interface ShapeAccount {
  label: string;
  /** Tokens that fill its 5-hour and weekly windows. */
  fiveHourLimitTokens: number;
  sevenDayLimitTokens: number;
  /** Weekly use when the workload begins, fraction (default 0). */
  sevenDayUsed?: number;
  /** Its first weekly reset, ms after the start; later ones follow every 7 days (staggered resets). */
  sevenDayResetInMs: number;
  /** A pay-as-you-go fallback (no windows). */
  fallback?: boolean;
}

/** The shape of a generated workload. Times in ms, sizes in tokens. */
export interface WorkloadShape {
  /** Seed of every draw. */
  seed: number;
  /** The first day's 00:00, epoch ms. */
  startMs: number;
  days: number;
  accounts: ShapeAccount[];
  /** Sessions started per day, spread over the active hours. */
  sessionsPerDay: number;
  /** Hours of the day (UTC) sessions start in, [from, to). */
  activeHours: Range;
  /** Requests per session. */
  turns: Range;
  /** Pause between a session's answer and its next request. */
  thinkMs: Range;
  /** The first request's prompt (system prompt, tools, first message). */
  firstPromptTokens: Range;
  /** What each later turn adds to the prompt (the new user message and tool results). */
  turnTokens: Range;
  outputTokens: Range;
  /** Arrival to the end of the answer. */
  durationMs: Range;
  /** Arrival to the answer's head (at most its duration). */
  headMs: Range;
  /** Bursts a day: a group of short sessions that start within a minute (sub-agents, parallel tasks). */
  burstsPerDay: number;
  burstSessions: Range;
  burstTurns: Range;
  /** Transient throttles a day, each on a random account, with a retry-after from `throttleMs`. */
  throttlesPerDay: number;
  throttleMs: Range;
  /** Models the sessions use (one per session, drawn). */
  models: readonly string[];
}

/** A week of a busy user on three accounts with staggered resets; one account's allowance is nearly spent. */
export const WEEK_SHAPE: Readonly<WorkloadShape> = Object.freeze<WorkloadShape>({
  seed: 1,
  startMs: Date.UTC(2025, 5, 2),
  days: 7,
  accounts: [
    { label: 'a', fiveHourLimitTokens: 1_500_000, sevenDayLimitTokens: 12_000_000, sevenDayUsed: 0.55, sevenDayResetInMs: 1.5 * 86_400_000 },
    { label: 'b', fiveHourLimitTokens: 1_500_000, sevenDayLimitTokens: 12_000_000, sevenDayUsed: 0.2, sevenDayResetInMs: 4 * 86_400_000 },
    { label: 'c', fiveHourLimitTokens: 1_500_000, sevenDayLimitTokens: 12_000_000, sevenDayUsed: 0.1, sevenDayResetInMs: 6.5 * 86_400_000 },
  ],
  sessionsPerDay: 30,
  activeHours: [8, 22],
  turns: [5, 40],
  thinkMs: [5_000, 120_000],
  firstPromptTokens: [8_000, 20_000],
  turnTokens: [200, 3_000],
  outputTokens: [100, 2_000],
  durationMs: [2_000, 40_000],
  headMs: [500, 3_000],
  burstsPerDay: 2,
  burstSessions: [3, 8],
  burstTurns: [2, 8],
  throttlesPerDay: 3,
  throttleMs: [1_000, 30_000],
  models: ['claude-sonnet-4-5-20250929', 'claude-opus-4-1-20250805'],
});

/** The workload of `shape` (accounts with given allowances, requests in arrival order, throttles). */
export function generateWorkload(shape: Readonly<WorkloadShape>): Workload {
  const rand = seededRandom(shape.seed);
  const draw = (r: Range) => r[0] + (r[1] - r[0]) * rand();
  const int = (r: Range) => Math.floor(r[0] + (r[1] - r[0] + 1) * rand());
  const hex16 = () =>
    Array.from({ length: 2 }, () =>
      Math.floor(rand() * 0x1_0000_0000)
        .toString(16)
        .padStart(8, '0'),
    ).join('');
  const endMs = shape.startMs + shape.days * 86_400_000;

  const accounts = shape.accounts.map((a, index): WorkloadAccount => ({
    label: a.label,
    index,
    primary: false,
    fallback: a.fallback === true,
    fiveHourLimitTokens: a.fiveHourLimitTokens,
    sevenDayLimitTokens: a.sevenDayLimitTokens,
    allowanceSource: 'given',
    allowanceEvidence: 0,
    fiveHour: { used: 0, resetAtMs: null },
    sevenDay: { used: a.sevenDayUsed ?? 0, resetAtMs: shape.startMs + a.sevenDayResetInMs },
    weeklyResetSchedule: weeklySchedule(shape.startMs + a.sevenDayResetInMs, endMs + FIVE_HOUR_MS),
  }));

  const requests: WorkloadRequest[] = [];
  const session = (startMs: number, turns: number) => {
    const id = hex16();
    const model = shape.models[Math.floor(rand() * shape.models.length)] ?? null;
    let prompt = Math.round(draw(shape.firstPromptTokens));
    let tail = prompt;
    let t = startMs;
    for (let k = 0; k < turns; k++) {
      const outputTokens = Math.round(draw(shape.outputTokens));
      const durationMs = Math.round(draw(shape.durationMs));
      const headMs = Math.min(durationMs, Math.round(draw(shape.headMs)));
      requests.push({
        atMs: Math.round(t),
        requestId: '',
        session: id,
        model,
        modelFamily: modelFamily(model ?? undefined),
        stream: true,
        promptTokens: prompt,
        tailTokens: tail,
        outputTokens,
        durationMs,
        headMs,
        policyIndex: 0,
        recordedServedBy: null,
        usageEstimated: false,
      });
      tail = Math.round(draw(shape.turnTokens));
      prompt += outputTokens + tail;
      t += durationMs + draw(shape.thinkMs);
    }
  };
  const activeStart = (day: number) => shape.startMs + day * 86_400_000 + shape.activeHours[0] * 3_600_000;
  const activeMs = (shape.activeHours[1] - shape.activeHours[0]) * 3_600_000;
  for (let day = 0; day < shape.days; day++) {
    for (let i = 0; i < shape.sessionsPerDay; i++) session(activeStart(day) + rand() * activeMs, int(shape.turns));
    for (let b = 0; b < shape.burstsPerDay; b++) {
      const at = activeStart(day) + rand() * activeMs;
      const n = int(shape.burstSessions);
      for (let i = 0; i < n; i++) session(at + rand() * 60_000, int(shape.burstTurns));
    }
  }
  requests.sort((x, y) => x.atMs - y.atMs);
  for (let i = 0; i < requests.length; i++) requests[i].requestId = `req_gen_${shape.seed}_${i}`;

  const serving = accounts.filter((a) => !a.fallback);
  const faults: TransientFault[] = [];
  for (let day = 0; day < shape.days && serving.length > 0; day++) {
    for (let i = 0; i < shape.throttlesPerDay; i++) {
      const account = serving[Math.floor(rand() * serving.length)].label;
      faults.push({ account, atMs: Math.round(activeStart(day) + rand() * activeMs), kind: 'throttle', answerMs: 0, cooldownMs: Math.round(draw(shape.throttleMs)) });
    }
  }
  faults.sort((x, y) => x.atMs - y.atMs);

  let last = shape.startMs;
  for (const r of requests) last = Math.max(last, r.atMs + r.durationMs);
  return {
    accounts,
    requests,
    faults,
    sessionStarts: [],
    recordedPolicies: [],
    cacheTtlMs: DEFAULT_CACHE_TTL_MS,
    cacheTtlEvidence: '5 min (generated)',
    startMs: requests[0]?.atMs ?? shape.startMs,
    endMs: last,
  };
}

/** Weekly resets from `firstMs` every 7 days up to `untilMs`, after the first. */
function weeklySchedule(firstMs: number, untilMs: number): number[] {
  const out: number[] = [];
  for (let t = firstMs + SEVEN_DAY_MS; t <= untilMs + SEVEN_DAY_MS; t += SEVEN_DAY_MS) out.push(t);
  return out;
}

/**
 * Writes the decision log `policy` would have written for `workload`, one record at a time, and
 * returns that run's result (what the log shows happened).
 */
export function writeDecisionLog(workload: Workload, policy: Readonly<RoutingPolicy>, write: (record: DecisionRecord) => void): SimulationResult {
  const recorded: Workload = { ...workload, recordedPolicies: [policy] };
  return simulate(recorded, { name: nameOf(policy), policy }, { onDecision: write });
}
