/**
 * A multi-session Claude-Code-shaped workload run live through the real router against the fake
 * upstream, under a given routing policy, leaving the router's own decision log: the input of the
 * what-if simulator's end-to-end and validation tests. Conversations grow turn by turn (so the
 * prompt cache matters), the accounts' 5-hour windows are small enough to fill, and throttles
 * strike a named account after a number of served requests (a one-shot 429 with `retry-after`).
 */
import { copyFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import type { SimAccountSpec } from '../../src/sim';
import type { ConfigInput } from '../../src/config/schema';
import { byRotationOrder } from '../../src/proxy/state/decisionFiles';
import { computeReport, type PolicyReport } from '../../src/routing/report';
import { accounts, callRouter, readDecisions, startHarness } from './routerHarness';

export interface LiveShape {
  /** The fake accounts: a, b, c with their windows. */
  accounts: SimAccountSpec[];
  sessions: number;
  turns: number;
  /** Pause between a session's turns, ms (real time). */
  thinkMs: number;
  /** Characters each turn adds to the conversation. */
  turnChars: number;
  /** After `afterServed` served requests, `account` answers its next request with a 429 throttle (`retry-after` in seconds). */
  throttles: Array<{ afterServed: number; account: string; retryAfterS: number }>;
}

/**
 * Three accounts whose 5-hour windows fill during the run (a's weekly allowance expires first, so
 * expiry-first starts there), and one throttle on a while every session is on it: without affinity
 * the sessions go to b and come back, with affinity they stay. The windows run dry before the end.
 */
export const LIVE_SHAPE: LiveShape = {
  accounts: accounts('a', 'b', 'c').map((a, i) => ({
    ...a,
    fiveHourLimitTokens: [300_000, 200_000, 50_000][i],
    initialFiveHourUsed: [0.2, 0.1, 0.3][i],
    sevenDayResetInMs: (1 + i * 2) * 86_400_000,
    initialSevenDayUsed: [0.6, 0.3, 0.45][i],
  })),
  sessions: 8,
  turns: 40,
  thinkMs: 400,
  turnChars: 1_600,
  throttles: [{ afterServed: 60, account: 'a', retryAfterS: 4 }],
};

/**
 * Runs `shape` under `routing` and copies the router's decision log to `logFile`.
 * @returns the report of the log (what happened)
 */
export async function runLiveWorkload(routing: ConfigInput['routing'], shape: LiveShape, logFile: string): Promise<PolicyReport> {
  const h = await startHarness(shape.accounts, { routing });
  try {
    // Evidence for every account first, as the usage poller gives a long-running proxy.
    for (let i = 0; i < shape.accounts.length; i++) await h.router.poller.tick();
    let served = 0;
    const onServed = () => {
      served++;
      for (const t of shape.throttles) if (t.afterServed === served) h.sim.injectFault(t.account, { kind: 'throttle', retryAfterS: t.retryAfterS });
    };
    const session = async (s: number) => {
      await sleep(s * 15);
      const messages: Array<{ role: string; content: string }> = [];
      for (let turn = 0; turn < shape.turns; turn++) {
        messages.push({ role: 'user', content: `Session ${s}, turn ${turn}: ${'x'.repeat(shape.turnChars)}` });
        const body = JSON.stringify({ model: 'claude-sonnet-4-5-20250929', max_tokens: 256, stream: true, system: [{ type: 'text', text: 'You are Claude Code.' }], messages });
        const r = await callRouter(h, { session: `live-${s}`, body });
        if (r.status === 200) {
          onServed();
          messages.push({ role: 'assistant', content: 'ok' });
        } else {
          messages.pop();
        }
        await sleep(shape.thinkMs);
      }
    };
    await Promise.all(Array.from({ length: shape.sessions }, (_, s) => session(s)));
    await h.router.close();
    const files = readdirSync(h.stateDir)
      .filter((f) => /^decisions.*\.jsonl$/.test(f))
      .sort(byRotationOrder);
    if (files.length !== 1) throw new Error(`expected one decision log, found ${files.join(', ')}`);
    copyFileSync(path.join(h.stateDir, files[0]), logFile);
    return computeReport(readDecisions(h.stateDir));
  } finally {
    await h.close();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
