/**
 * The policy workload with short windows: a multi-session Claude Code workload run live (real time)
 * through the real router against the fake upstream, whose accounts' weekly windows reset DURING the
 * run, at staggered moments — the live counterpart of the what-if simulator's generated week
 * (docs/policies.md#forecast-live-against-the-fake-upstream). The fake upstream's windows are 5 hours
 * and 7 days long; a week resets within the run only because its first reset is set seconds away
 * (`sevenDayResetInMs`). After that reset the account's next week starts with its next request and
 * runs its full 7 days, so each account has exactly one reset in the run.
 */
import { writeFileSync } from 'node:fs';
import type { ConfigInput } from '../../src/config/schema';
import type { DecisionRecord } from '../../src/routing/decision';
import { computeReport, type PolicyReport } from '../../src/routing/report';
import type { SimAccountSpec } from '../../src/sim';
import { accounts, callRouter, startHarness } from './routerHarness';

/** One Claude Code session of the workload. */
export interface ShortSession {
  /** When its first turn starts, ms after the workload starts. */
  startMs: number;
  turns: number;
  /** Pause between the end of an answer and the next turn, ms. */
  thinkMs: number;
  /** Characters each user turn adds to the conversation (about a quarter as many tokens). */
  turnChars: number;
}

export interface ShortWindowsShape {
  /** The fake accounts, with their weekly resets seconds away. */
  accounts: SimAccountSpec[];
  sessions: ShortSession[];
  /**
   * Transient throttles: `atMs` after the workload starts, the account that served the latest request answers every
   * request with 429 `retry-after: retryAfterS` (seconds) for `retryAfterS` seconds. Anchored in time, as the resets are.
   */
  throttles: Array<{ atMs: number; retryAfterS: number }>;
  /** Delay between an answer's stream events, ms: answers last a while, so sessions overlap on an account. */
  streamEventIntervalMs: number;
}

/**
 * The weekly allowance of every account, tokens: the router's own estimate before it has learned a window's cost
 * (src/quota/learnedCosts.ts DEFAULT_WINDOW_TOKENS), so `forecast` converts the weeks' remaining fractions into the
 * right number of tokens from the first request. A week's learned cost takes rises of 1 % (100,000 tokens here) to
 * learn, more than a minute's traffic puts on one account.
 */
export const WEEK_TOKENS = 10_000_000;
/** The 5-hour window of every account, tokens: 1.5 times the router's first estimate (1,000,000), as on the generated week. */
export const FIVE_HOUR_TOKENS = 1_500_000;

/** Turns of the steady sessions, in start order (varied lengths). */
const STEADY_TURNS = [48, 30, 60, 36, 54, 24, 42, 58, 28, 46, 34, 40, 26, 38];
/** Think time of the steady sessions, ms, in start order. */
const STEADY_THINK = [300, 400, 250, 350, 450, 300, 400, 250, 350, 300, 450, 400, 250, 350];

/**
 * Three accounts whose weeks reset 12 s, 26 s and 40 s after the upstream starts (about 25 %, 55 % and 85 % of the
 * ~48 s run): a first, then b, then c. Each week holds less than the run's traffic between its predecessor's reset
 * and its own (a 45,000 tokens, b 250,000, c 350,000 of ~1,000,000 sent in all), so an allowance is spent before it
 * expires only when enough of that traffic is routed to it. Fourteen sessions start 2.2 s apart (24–60 turns,
 * 250–450 ms of thought), a burst of four short ones (6–12 turns) at 13 s, and five throttles of 1–2 s.
 */
export const SHORT_WINDOWS: ShortWindowsShape = {
  accounts: accounts('a', 'b', 'c').map((a, i) => ({
    ...a,
    sevenDayLimitTokens: WEEK_TOKENS,
    sevenDayResetInMs: [12_000, 26_000, 40_000][i],
    initialSevenDayUsed: [0.9955, 0.975, 0.965][i],
    fiveHourLimitTokens: FIVE_HOUR_TOKENS,
    initialFiveHourUsed: [0.2, 0.3, 0.1][i],
    fiveHourResetInMs: 3 * 3_600_000,
  })),
  sessions: [
    ...STEADY_TURNS.map((turns, i) => ({ startMs: i * 2_200, turns, thinkMs: STEADY_THINK[i], turnChars: 2_000 })),
    ...[0, 1, 2, 3].map((i) => ({ startMs: 13_000 + i * 150, turns: 6 + 2 * i, thinkMs: 200, turnChars: 2_000 })),
  ],
  throttles: [5_000, 14_000, 23_000, 32_000, 41_000].map((atMs, i) => ({ atMs, retryAfterS: 1 + (i % 2) })),
  streamEventIntervalMs: 15,
};

/**
 * The session-affinity idle TTL of the three policies in this run, ms: the shortest the configuration accepts. On
 * the generated week it is 60 minutes, about twice a session's life; scaled by sessions' life (10–30 s here) it would
 * be about 40 s. `forecast` takes it as the time a session keeps working until a session has ended and gone idle that
 * long, and counts a finished session until that long after its last turn (its fade over 45 minutes does not act
 * within seconds): in a ~50 s run no session has been idle that long, so the horizon stays 60 s and a finished
 * session counts to the end of the run.
 * docs/policies.md#forecast-live-against-the-fake-upstream also shows the run with 20 s (passed without the
 * configuration's check): the direction is the same.
 */
export const LIVE_IDLE_TTL_MS = 60_000;

/** The three policies of the issue, all with session affinity, as the what-if test compares them (test/whatif/forecast.test.ts). */
export const FORECAST_LIVE_POLICIES = (idleTtlMs: number): Record<'expiry-first' | 'headroom-first' | 'forecast', ConfigInput['routing']> => ({
  'expiry-first': { strategy: 'fill-first', accountRanking: 'expiry-first', sessionAffinity: true, sessionAffinityIdleTtlMs: idleTtlMs },
  'headroom-first': { strategy: 'fill-first', accountRanking: 'headroom-first', sessionAffinity: true, sessionAffinityIdleTtlMs: idleTtlMs },
  forecast: { strategy: 'forecast', sessionAffinity: true, sessionAffinityIdleTtlMs: idleTtlMs },
});

/** What the fake upstream's own windows said just before an account's week reset: the truth the log's figure is checked against. */
export interface ResetTruth {
  account: string;
  /** The week's reset, epoch ms. */
  resetAtMs: number;
  /** Its utilisation, fraction, read from the upstream shortly before the reset. */
  usedBeforeReset: number;
  /** How long before the reset it was read, ms. */
  readBeforeMs: number;
}

export interface ShortWindowsRun {
  /** The report of the router's decision log, its weekly resets carrying `unusedTokens` (the allowance is known here). */
  report: PolicyReport;
  truth: ResetTruth[];
  /** Time, ms, during which some account's week was spent before its reset (between decisions, as the report counts time). */
  weekSpentMs: number;
  /** Wall-clock time of the run, ms. */
  wallMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `shape` under `routing` and reports on the router's decision log.
 * @param logFile where to copy the decision log (JSON lines), for a person to read
 */
export async function runShortWindows(routing: ConfigInput['routing'], shape: ShortWindowsShape, logFile?: string): Promise<ShortWindowsRun> {
  const started = Date.now();
  const h = await startHarness(shape.accounts, { routing, sim: { sseIntervalMs: shape.streamEventIntervalMs } });
  const timers: NodeJS.Timeout[] = [];
  try {
    // Evidence for every account first, as the usage poller gives a long-running proxy.
    for (let i = 0; i < shape.accounts.length; i++) await h.router.poller.tick();
    const truth: ResetTruth[] = [];
    for (const a of shape.accounts) {
      const resetAtMs = h.sim.account(a.label).sevenDayResetAtMs;
      const readBeforeMs = 40;
      timers.push(
        setTimeout(
          () => truth.push({ account: a.label, resetAtMs, usedBeforeReset: h.sim.account(a.label).sevenDayUsed, readBeforeMs }),
          Math.max(0, resetAtMs - readBeforeMs - Date.now()),
        ),
      );
    }
    let lastServedBy: string | undefined;
    const t0 = Date.now();
    for (const t of shape.throttles) {
      timers.push(
        setTimeout(() => {
          if (lastServedBy) h.sim.injectFault(lastServedBy, { kind: 'throttle_window', durationMs: t.retryAfterS * 1000, retryAfterS: t.retryAfterS });
        }, t.atMs),
      );
    }
    const session = async (s: ShortSession, n: number) => {
      await sleep(Math.max(0, t0 + s.startMs - Date.now()));
      const messages: Array<{ role: string; content: string }> = [];
      for (let turn = 0; turn < s.turns; turn++) {
        messages.push({ role: 'user', content: `Session ${n}, turn ${turn}: ${'x'.repeat(s.turnChars)}` });
        const body = JSON.stringify({ model: 'claude-sonnet-4-5-20250929', max_tokens: 256, stream: true, system: [{ type: 'text', text: 'You are Claude Code.' }], messages });
        const r = await callRouter(h, { session: `short-${n}`, body });
        if (r.status === 200) {
          lastServedBy = r.headers['x-claude-router-account'] ?? lastServedBy;
          messages.push({ role: 'assistant', content: 'ok' });
        } else {
          messages.pop();
        }
        await sleep(s.thinkMs);
      }
    };
    await Promise.all(shape.sessions.map((s, n) => session(s, n)));
    await h.router.close();
    const decisions = h.decisions();
    if (logFile) writeFileSync(logFile, decisions.map((d) => JSON.stringify(d)).join('\n') + '\n');
    const report = computeReport(decisions);
    const weekSpentMs = weekSpentTime(decisions);
    const limit = new Map(shape.accounts.map((a) => [a.label, a.sevenDayLimitTokens ?? WEEK_TOKENS]));
    for (const r of report.weeklyResets) r.unusedTokens = r.unusedFraction * limit.get(r.account)!;
    return { report, truth: truth.sort((x, y) => x.resetAtMs - y.resetAtMs), weekSpentMs, wallMs: Date.now() - started };
  } finally {
    for (const t of timers) clearTimeout(t);
    await h.close();
  }
}

/** Between consecutive decisions, the interval counts when the earlier one saw a week spent (utilisation ≥ 1 before its reset). */
function weekSpentTime(decisions: readonly DecisionRecord[]): number {
  const sorted = decisions.map((d) => ({ at: Date.parse(d.ts), spent: (d.candidates ?? []).some((c) => (c.metrics.weeklyUsed ?? 0) >= 1) })).sort((x, y) => x.at - y.at);
  let ms = 0;
  for (let i = 0; i + 1 < sorted.length; i++) if (sorted[i].spent) ms += sorted[i + 1].at - sorted[i].at;
  return ms;
}
