/**
 * The router decides the same on the same world, whatever the code's shape: a seeded workload
 * (fixed clock, fixed sessions, models and faults) through the real router against the fake
 * upstream, one request at a time, and every decision — the account, the selection reason, every
 * candidate's verdict and metrics, the attempts — compared with the record kept in
 * `test/fixtures/seeded-decisions.jsonl`. A restructuring of the request path (the attempt loop,
 * the planner's stages, the holders) must leave it byte for byte; `replay` cannot show that, since
 * it re-ranks recorded metrics and does not run the attempt loop.
 *
 * Only what depends on the wall clock is left out: the request id, the timestamp, durations and
 * attempt times. A change that means to decide otherwise rewrites the record with
 * `SEEDED_DECISIONS_UPDATE=1 npx mocha out/test/proxy/seededDecisions.test.js` and says why in
 * its commit.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { ConfigInput } from '../../src/config/schema';
import type { DecisionRecord } from '../../src/routing/decision';
import type { SimAccountSpec, SimFault } from '../../src/sim';
import { accounts, callRouter, eventually, messagesBody, startHarness } from '../support/routerHarness';

const FIXTURE = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'seeded-decisions.jsonl');
const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
const MODELS = ['claude-sonnet-4-5-20250929', 'claude-opus-4-1-20250805', 'claude-haiku-4-5-20251001'];

/** Four accounts whose windows stand at different places, so the ranking has something to rank. */
function world(): SimAccountSpec[] {
  const [a, b, c, d] = accounts('a', 'b', 'c', 'd');
  return [
    { ...a, fiveHourLimitTokens: 400_000, initialFiveHourUsed: 0.3, fiveHourResetInMs: 2 * 3600_000 },
    { ...b, initialFiveHourUsed: 0.1, fiveHourResetInMs: 4 * 3600_000, initialSevenDayUsed: 0.6, sevenDayResetInMs: 20 * 3600_000 },
    { ...c, initialFiveHourUsed: 0.7, fiveHourResetInMs: 30 * 60_000 },
    { ...d, fiveHourLimitTokens: 60_000, initialSevenDayUsed: 0.9, sevenDayResetInMs: 3 * 24 * 3600_000 },
  ];
}

/** The faults of the run: at request `at`, on the account named, `last` being the one that served the request before. */
const FAULTS: { at: number; on: string; fault: SimFault }[] = [
  { at: 8, on: 'last', fault: { kind: 'throttle', retryAfterS: 600 } },
  { at: 14, on: 'last', fault: { kind: 'exhaust_after_answer', window: '5h', resetInMs: 3600_000 } },
  { at: 21, on: 'last', fault: { kind: 'overloaded_529' } },
  { at: 27, on: 'last', fault: { kind: 'server_error', status: 503 } },
  { at: 33, on: 'b', fault: { kind: 'exhaust', window: '7d', resetInMs: 6 * 3600_000 } },
  { at: 40, on: 'last', fault: { kind: 'forbidden' } },
  { at: 46, on: 'last', fault: { kind: 'overloaded_in_stream' } },
];

/** What of a decision does not depend on the wall clock. */
function stable(d: DecisionRecord): unknown {
  const { ts: _ts, requestId: _id, durationMs: _ms, attempts, waits, ...rest } = d;
  const out = { ...rest, attempts: attempts.map(({ ms: _t, ...a }) => a), waits: waits?.map((w) => ({ why: w.why, account: w.account })) };
  return JSON.parse(JSON.stringify(out)) as unknown; // as the record file holds it: no undefined members
}

/** `fresh` with only the top-level members `recorded` has. */
function sameMembers(fresh: unknown, recorded: unknown): unknown {
  const f = fresh as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(recorded as object)
      .map((k) => [k, f[k]])
      .filter(([, v]) => v !== undefined),
  );
}

/** The record file: one `[policy, decision]` a line, so a difference reads as a line of a diff. */
function recordText(runs: Record<string, unknown[]>): string {
  return Object.entries(runs)
    .flatMap(([name, list]) => list.map((d) => JSON.stringify([name, d])))
    .join('\n')
    .concat('\n');
}

/** Reads the record file: the decisions of each policy, in order. */
function readRecord(file: string): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  if (!existsSync(file)) return out;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    const [name, decision] = JSON.parse(line) as [string, unknown];
    (out[name] ??= []).push(decision);
  }
  return out;
}

/** Runs the seeded workload under `routing` and returns its decisions, stable parts only. */
async function run(routing: ConfigInput['routing']): Promise<unknown[]> {
  let t = T0;
  const now = () => t;
  const h = await startHarness(world(), { sim: { now }, now, routing });
  try {
    let last = 'a';
    for (let i = 0; i < 56; i++) {
      for (const f of FAULTS) if (f.at === i) h.sim.injectFault(f.on === 'last' ? last : f.on, f.fault);
      // Eight sessions in a fixed rotation, one without a session header (a fingerprint), a
      // gap of twenty minutes in the middle (bindings and prompt caches go cold).
      const session = i % 8 === 7 ? undefined : `seeded-session-${i % 8}`;
      const res = await callRouter(h, { session, body: messagesBody({ model: MODELS[i % 3], stream: i % 4 === 1, text: `turn ${i} of ${i % 8}` }) });
      const servedBy = res.headers['x-claude-router-account'];
      if (servedBy) last = servedBy;
      t += i === 28 ? 20 * 60_000 : 17_000;
    }
    await eventually(() => h.decisions().length >= 56, 5_000, 'the decision log');
    return h.decisions().map(stable);
  } finally {
    await h.close();
  }
}

const POLICIES: Record<string, ConfigInput['routing']> = {
  default: undefined,
  'headroom-first': { accountRanking: 'headroom-first' },
  forecast: { strategy: 'forecast' },
};

describe('seeded decisions: the same world decides the same', function () {
  this.timeout(60_000);
  const recorded = readRecord(FIXTURE);
  const fresh: Record<string, unknown[]> = {};

  for (const [name, routing] of Object.entries(POLICIES)) {
    it(`${name}: every decision of the seeded workload equals the recorded one`, async () => {
      const decisions = await run(routing);
      fresh[name] = decisions;
      if (process.env.SEEDED_DECISIONS_UPDATE) return;
      assert.ok(recorded[name], `no record for ${name} in ${FIXTURE}: run with SEEDED_DECISIONS_UPDATE=1`);
      assert.equal(decisions.length, recorded[name].length, 'as many decisions as recorded');
      // Members a later record format adds (the request class, say) are not compared: the decision is.
      for (let i = 0; i < decisions.length; i++) assert.deepEqual(sameMembers(decisions[i], recorded[name][i]), recorded[name][i], `decision ${i} of ${name}`);
    });
  }

  it('the workload meets what it is for: failovers, a window rejected, more than one account serving', () => {
    const all = (recorded.default ?? fresh.default) as DecisionRecord[];
    assert.ok(
      all.some((d) => d.attempts.length > 1),
      'some request failed over',
    );
    assert.ok(new Set(all.map((d) => d.servedBy)).size >= 2, 'more than one account served');
    assert.ok(
      all.some((d) => d.candidates.some((c) => !c.metrics.usable)),
      'some candidate was unusable',
    );
  });

  after(() => {
    if (process.env.SEEDED_DECISIONS_UPDATE) writeFileSync(FIXTURE, recordText(fresh));
  });
});
