import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import fc from 'fast-check';
import { readDecisionLogs } from '../../src/cli/logCommands';
import { buildDecisionRecord, type DecisionRecord, type OutcomeFacts, type RecordedCandidate, type RecordedMetrics, type RequestFacts } from '../../src/routing/decision';
import { DecisionLineEncoder } from '../../src/routing/decisionLine';
import { planRoute } from '../../src/routing/plan';
import { DEFAULT_POLICY } from '../../src/routing/policy';
import { DAY, HOUR, MIN, acct, planInput, snap } from './builders';

const FIXTURE = path.resolve(__dirname, '../../../test/fixtures/ranking-branches.jsonl');

const facts: RequestFacts = {
  ts: '2026-11-30T12:00:00.000Z',
  requestId: 'req_router_1',
  stickyKeySource: 'header',
  stickyKind: 'session',
  stickyKeyHash: '0123456789abcdef',
  path: '/v1/messages',
  model: 'claude-sonnet-4-5',
  stream: true,
};
const outcome: OutcomeFacts = {
  servedBy: 'ticking',
  servedByFallback: false,
  attempts: [
    { account: 'cooling', status: 429, result: 'throttle', ms: 12 },
    { account: 'ticking', status: 200, result: 'success', ms: 30 },
  ],
  outcome: 'success',
  status: 200,
  usage: { inputTokens: 10, outputTokens: 5, cacheCreationInputTokens: 0, cacheReadInputTokens: 7 },
  durationMs: 41,
};

/** A record from a real plan over accounts in every state (Infinity resets, unusable reasons, scoped windows). */
function realRecord(): DecisionRecord {
  const accounts = [
    acct('none', 0, { snap: null }),
    acct('ticking', 1, { family: 'sonnet', snap: snap({ s: { used: 0.5, resetIn: HOUR }, w: { used: 0.6, resetIn: DAY }, scoped: { sonnet: { used: 0.3 } } }) }),
    acct('cooling', 2, { coolIn: 5 * MIN }),
    acct('signin', 3, { needsSignIn: true }),
    acct('saturated', 4, { primary: true, snap: snap({ s: { used: 0.98, resetIn: 30 * MIN } }) }),
    acct('nullweekly', 5, { snap: snap({ w: { noUsed: true } }) }),
  ];
  const policy = { ...DEFAULT_POLICY, sessionAffinity: true, spillInflight: 2 };
  const plan = planRoute(planInput(accounts, policy, { binding: { account: 'ticking', lastServedAtMs: 0 } }));
  return buildDecisionRecord(facts, plan, policy, outcome);
}

/** The same member with another value of its kind. */
function changed(v: unknown): unknown {
  if (typeof v === 'boolean') return !v;
  if (typeof v === 'number') return v + 1;
  if (v === null) return 0.25;
  if (v === undefined) return 'cooldown';
  return `${typeof v === 'string' ? v : JSON.stringify(v)}-changed`;
}

describe('routing/decisionLine: the decision record written by hand', () => {
  it('writes exactly what JSON.stringify writes, for every record of the branch fixture', async () => {
    const { records, badLines } = await readDecisionLogs([FIXTURE]);
    assert.equal(badLines, 0);
    assert.ok(records.length > 20);
    const encoder = new DecisionLineEncoder();
    for (const r of records) assert.equal(encoder.encode(r), JSON.stringify(r), r.requestId);
  });

  it('writes exactly what JSON.stringify writes for a record built from a real plan', () => {
    const r = realRecord();
    assert.equal(new DecisionLineEncoder().encode(r), JSON.stringify(r));
  });

  it('writes the hint members (class, id hashes, compaction flag, unit) exactly as JSON.stringify does, present or left out', () => {
    const r = realRecord();
    assert.deepEqual(
      [r.requestClass, r.promptIdHash, r.agentIdHash, r.contextCompacted, r.unitKey, r.unitSource],
      ['main', null, null, false, facts.stickyKeyHash, 'x-claude-code-session-id'],
      'facts without hints read as a main request',
    );
    const encoder = new DecisionLineEncoder();
    const sub: DecisionRecord = { ...r, requestClass: 'subagent', promptIdHash: 'fedcba9876543210', agentIdHash: '00112233445566ff', contextCompacted: true };
    assert.equal(encoder.encode(sub), JSON.stringify(sub));
    const older: DecisionRecord = { ...r };
    for (const k of ['requestClass', 'promptIdHash', 'agentIdHash', 'contextCompacted', 'unitKey', 'unitSource'] as const) delete older[k];
    assert.equal(encoder.encode(older), JSON.stringify(older));
  });

  it('writes the waits of a request that waited exactly as JSON.stringify does', () => {
    const r = realRecord();
    r.waits = [
      { why: 'blip', account: 'ticking', ms: 1_012, end: 'woken' },
      { why: 'transient', account: 'cooling', ms: 0, end: 'refused' },
    ];
    const line = new DecisionLineEncoder().encode(r);
    assert.equal(line, JSON.stringify(r));
    assert.deepEqual((JSON.parse(line) as DecisionRecord).waits, r.waits);
  });

  it('a change to any one metrics member of any account shows in the next line (no stale metrics text)', () => {
    const encoder = new DecisionLineEncoder();
    const base = realRecord();
    assert.equal(encoder.encode(base), JSON.stringify(base));
    const keys = Object.keys(base.candidates[0].metrics).concat('unusableReason') as (keyof RecordedMetrics)[];
    for (let i = 0; i < base.candidates.length; i++) {
      for (const key of new Set(keys)) {
        const r = realRecord();
        const m = r.candidates[i].metrics as unknown as Record<string, unknown>;
        m[key] = changed(m[key]);
        assert.equal(encoder.encode(r), JSON.stringify(r), `${r.candidates[i].account}.${key}`);
        // …and back: the account's earlier text is not reused for the changed values either.
        const again = realRecord();
        assert.equal(encoder.encode(again), JSON.stringify(again), `${r.candidates[i].account}.${key} restored`);
      }
    }
  });

  it('a change to any one member of any candidate shows in the next line (no stale candidate text)', () => {
    const encoder = new DecisionLineEncoder();
    const base = realRecord();
    assert.equal(encoder.encode(base), JSON.stringify(base));
    const variants: Record<string, (c: RecordedCandidate) => void> = {
      rank: (c) => (c.rank += 1),
      verdict: (c) => (c.verdict = c.verdict === 'selected' ? 'ranked_below' : 'selected'),
      reason: (c) => (c.reason = `${c.reason}-changed`),
      filter: (c) => (c.filter = { code: 'over_cap', inflight: 3, cap: 2 }),
      'filter figures': (c) => (c.filter = { code: 'soft_limit', used: 0.91, resetMs: 1_700_000_000_000 }),
      'no filter': (c) => (c.filter = undefined),
      forecast: (c) => (c.forecast = { free5h: 12_000, free7d: 90_000, need5h: 3_000, need7d: 3_000, fits: true, reserve7d: 0, weeklyResetMs: null }),
      index: (c) => (c.index += 7),
      primary: (c) => (c.primary = !c.primary),
      fallback: (c) => (c.fallback = !c.fallback),
      inflight: (c) => (c.inflight += 1),
    };
    for (let i = 0; i < base.candidates.length; i++) {
      for (const [what, change] of Object.entries(variants)) {
        const r = realRecord();
        change(r.candidates[i]);
        assert.equal(encoder.encode(r), JSON.stringify(r), `${r.candidates[i].account}: ${what}`);
        const again = realRecord();
        assert.equal(encoder.encode(again), JSON.stringify(again), `${r.candidates[i].account}: ${what} restored`);
      }
    }
  });

  it('escapes and formats like JSON.stringify: any text, any number', () => {
    const text = fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom('"', '\\', '\u2028', '\ud800', 'é', '\n\t', '</script>'));
    const number = fc.oneof(fc.double(), fc.integer(), fc.constantFrom(NaN, Infinity, -Infinity, -0, 1e21, 5e-7));
    const encoder = new DecisionLineEncoder();
    fc.assert(
      fc.property(text, text, text, text, number, number, fc.option(text, { nil: null }), (account, session, model, result, n1, n2, policyError) => {
        const r = realRecord();
        r.stickyKeyHash = session;
        r.model = model;
        r.policyError = policyError;
        r.servedBy = account;
        r.rankingOrder = [account, ...r.rankingOrder];
        r.candidates[0].account = account;
        r.candidates[0].metrics.sessionUsed = n1;
        r.candidates[1].metrics.headroom = n2;
        r.attempts = [{ account, status: n1, result, ms: n2 }];
        r.durationMs = n2;
        assert.equal(encoder.encode(r), JSON.stringify(r));
      }),
      { numRuns: 300, seed: 11 },
    );
  });
});
