/**
 * A simulated multi-session Claude Code workload against the fake upstream,
 * used to compare routing policies with `computeReport`: concurrent sessions
 * whose conversations grow turn by turn (so the prompt cache matters),
 * transient throttles (a `retry-after` of 1–2 s) on whichever account serves at
 * the time — the conditions under which the seed saw sessions ping-pong between
 * accounts — a concurrency limit per account (parallel requests above it are
 * throttled, as an upstream does), and staggered quota, so sessions must move
 * when their account runs out.
 */
import { writeFileSync } from 'node:fs';
import type { ConfigInput } from '../../src/config/schema';
import { computeReport, type PolicyReport } from '../../src/routing/report';
import { accounts, callRouter, startHarness } from './routerHarness';

export interface WorkloadOptions {
  sessions: number;
  turns: number;
  /** Pause between a session's turns, ms. */
  thinkMs: number;
  /**
   * Transient throttles: after `afterRequests` served requests, the account that served the latest one answers every
   * request with 429 `retry-after: retryAfterS` (seconds, at most 2 here) for `retryAfterS` seconds.
   */
  throttles: Array<{ afterRequests: number; retryAfterS: number }>;
  /**
   * Staggered quota: each account's (a, b, c) 5-hour window holds this many tokens (as the fake
   * upstream charges them: cache reads at a tenth) and starts {@link WorkloadOptions.initialFiveHourUsed} full.
   */
  fiveHourLimitTokens: [number, number, number];
  /** Each account's 5-hour window starts this full (fractions). */
  initialFiveHourUsed: [number, number, number];
  /** Each account's upstream concurrency limit: a request arriving while this many are in flight on it is throttled (429, headers `allowed`, no `retry-after`). */
  concurrencyLimit: number;
  /** Delay between an answer's stream events, ms: answers last a while, so sessions overlap on an account. */
  streamEventIntervalMs: number;
}

export const DEFAULT_WORKLOAD: WorkloadOptions = {
  sessions: 10,
  turns: 45,
  thinkMs: 100,
  throttles: [
    { afterRequests: 30, retryAfterS: 1 },
    { afterRequests: 80, retryAfterS: 2 },
    { afterRequests: 150, retryAfterS: 1 },
    { afterRequests: 220, retryAfterS: 2 },
    { afterRequests: 300, retryAfterS: 1 },
    { afterRequests: 380, retryAfterS: 2 },
  ],
  // One session's whole conversation costs about 61,000 tokens. a has room for 0.9 of one, b for 1.9, c for 17: whatever
  // the placement (it follows the concurrency limit's spills, so timing), a session on a, or the second on b, must move
  // for quota; and c can take every session that has to move.
  fiveHourLimitTokens: [500_000, 500_000, 1_500_000],
  initialFiveHourUsed: [0.89, 0.77, 0.3],
  concurrencyLimit: 3,
  streamEventIntervalMs: 15,
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs the workload under `routing` and returns the seed's report over its decision log.
 * @param logFile where to copy the decision log (JSON lines), for a person to read
 */
export async function runWorkload(routing: ConfigInput['routing'], w: WorkloadOptions = DEFAULT_WORKLOAD, logFile?: string): Promise<PolicyReport> {
  const spec = accounts('a', 'b', 'c').map((a, i) => ({
    ...a,
    // a's weekly allowance expires first (expiry-first's rank 0); headroom-first starts on b.
    sevenDayResetInMs: (1 + i * 2) * 86_400_000,
    initialSevenDayUsed: [0.6, 0.3, 0.45][i],
    fiveHourLimitTokens: w.fiveHourLimitTokens[i],
    initialFiveHourUsed: w.initialFiveHourUsed[i],
    fiveHourResetInMs: 4 * 3_600_000,
  }));
  const h = await startHarness(spec, { routing, sim: { sseIntervalMs: w.streamEventIntervalMs } });
  try {
    // Evidence for every account first, as the usage poller gives a long-running proxy.
    for (let i = 0; i < spec.length; i++) await h.router.poller.tick();
    for (const a of spec) h.sim.setConcurrencyLimit(a.label, w.concurrencyLimit);
    let served = 0;
    const onServed = (account: string | undefined) => {
      served++;
      const t = w.throttles.find((x) => x.afterRequests === served);
      if (account && t) h.sim.injectFault(account, { kind: 'throttle_window', durationMs: t.retryAfterS * 1000, retryAfterS: t.retryAfterS });
    };
    const session = async (s: number) => {
      await sleep(s * 20);
      const messages: Array<{ role: string; content: string }> = [];
      for (let turn = 0; turn < w.turns; turn++) {
        messages.push({ role: 'user', content: `Session ${s}, turn ${turn}: ${'context '.repeat(200)}` });
        const body = JSON.stringify({ model: 'claude-sonnet-4-5-20250929', max_tokens: 256, stream: true, system: [{ type: 'text', text: 'You are Claude Code.' }], messages });
        const r = await callRouter(h, { session: `workload-${s}`, body });
        onServed(r.headers['x-claude-router-account']);
        if (r.status === 200) messages.push({ role: 'assistant', content: 'ok' });
        else messages.pop();
        await sleep(w.thinkMs);
      }
    };
    await Promise.all(Array.from({ length: w.sessions }, (_, s) => session(s)));
    await h.router.close();
    const decisions = h.decisions();
    if (logFile) writeFileSync(logFile, decisions.map((d) => JSON.stringify(d)).join('\n') + '\n');
    return computeReport(decisions);
  } finally {
    await h.close();
  }
}

/** The seed's suggested configuration. */
export const SUGGESTED_ROUTING: ConfigInput['routing'] = {
  accountRanking: 'headroom-first',
  sessionAffinity: true,
  sessionAffinityIdleTtlMs: 3_600_000,
  spillInflight: 20,
};
