/**
 * A simulated multi-session Claude Code workload against the fake upstream,
 * used to compare routing policies with `computeReport`: concurrent sessions
 * whose conversations grow turn by turn (so the prompt cache matters), and
 * transient throttles on the busiest account — the conditions under which the
 * seed saw sessions ping-pong between accounts.
 */
import type { ConfigInput } from '../../src/config/schema';
import { computeReport, type PolicyReport } from '../../src/routing/report';
import { accounts, callRouter, startHarness } from './routerHarness';

export interface WorkloadOptions {
  sessions: number;
  turns: number;
  /** Pause between a session's turns, ms. */
  thinkMs: number;
  /** After how many served requests to throttle the account that served the latest one (one 429, `retry-after: 1`). */
  throttleAfterRequests: number[];
}

export const DEFAULT_WORKLOAD: WorkloadOptions = {
  sessions: 10,
  turns: 45,
  thinkMs: 100,
  throttleAfterRequests: [30],
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the workload under `routing` and returns the seed's report over its decision log. */
export async function runWorkload(routing: ConfigInput['routing'], w: WorkloadOptions = DEFAULT_WORKLOAD): Promise<PolicyReport> {
  const spec = accounts('a', 'b', 'c').map((a, i) => ({
    ...a,
    // a's weekly allowance expires first (expiry-first's rank 0); headroom differs per account.
    sevenDayResetInMs: (1 + i * 2) * 86_400_000,
    initialSevenDayUsed: [0.6, 0.3, 0.45][i],
    initialFiveHourUsed: [0.2, 0.1, 0.3][i],
  }));
  const h = await startHarness(spec, { routing });
  try {
    // Evidence for every account first, as the usage poller gives a long-running proxy.
    for (let i = 0; i < spec.length; i++) await h.router.poller.tick();
    let served = 0;
    const onServed = (account: string | undefined) => {
      served++;
      if (account && w.throttleAfterRequests.includes(served)) h.sim.injectFault(account, { kind: 'throttle', retryAfterS: 1 });
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
    return computeReport(h.decisions());
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
