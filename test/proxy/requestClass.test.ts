/**
 * Claude Code's gateway hint headers through the real proxy against the fake upstream: the
 * decision record carries the request class, the prompt and agent id hashes, the compaction flag
 * and the affinity unit; an auxiliary request is planned like any other but never binds or moves
 * a binding (src/routing/requestClass.ts, docs/claude-code-client.md#request-classes).
 */
import { strict as assert } from 'node:assert';
import type { SimAccountSpec } from '../../src/sim';
import { stickyKeyHash } from '../../src/routing/identify';
import type { DecisionRecord } from '../../src/routing/decision';
import { accounts, callRouter, eventually, routerStatus, startHarness, type Harness } from '../support/routerHarness';

const DAY = 86_400_000;

/** Accounts a then b: a ranks first under expiry-first (its weekly allowance expires sooner). */
const A_THEN_B: SimAccountSpec[] = [
  { ...accounts('a')[0], sevenDayResetInMs: DAY, initialSevenDayUsed: 0.5 },
  { ...accounts('b')[0], sevenDayResetInMs: 3 * DAY, initialSevenDayUsed: 0.1 },
];

const servedBy = (r: { headers: Record<string, string> }) => r.headers['x-claude-router-account'];

/** The hint headers Claude Code 2.1.328 sends with the flag on (observed names). */
function hints(cls: string, extra: Record<string, string> = {}): Record<string, string> {
  return { 'x-claude-code-request-class': cls, 'x-claude-1p-request-class': cls, ...extra };
}

describe('request classes: recorded, and auxiliary requests never bind', function () {
  this.timeout(30_000);
  let h: Harness;
  afterEach(() => h?.close());

  async function recordOf(requestCount: number): Promise<DecisionRecord[]> {
    await eventually(() => h.decisions().length >= requestCount, 3_000, `${requestCount} decision records`);
    return h.decisions();
  }

  it('records the class, the id hashes, the compaction flag and the unit; a missing or unknown class reads as main', async () => {
    h = await startHarness(A_THEN_B);
    const prompt = 'prompt-1a2b3c';
    const agent = 'a6d52659166f154a1';
    await callRouter(h, { session: 'sess-1', headers: hints('main', { 'x-claude-code-prompt-id': prompt }) });
    await callRouter(h, { session: 'sess-1', headers: hints('subagent', { 'x-claude-code-prompt-id': prompt, 'x-claude-code-agent-id': agent }) });
    await callRouter(h, { session: 'sess-1', headers: { 'x-claude-code-request-class': 'compaction', 'x-claude-code-compaction': 'manual' } });
    await callRouter(h, { session: 'sess-1', headers: hints('main', { 'x-claude-code-prompt-id': 'p2', 'x-claude-code-context-compacted': 'manual' }) });
    await callRouter(h, { session: 'sess-1', headers: { 'x-claude-code-request-class': 'a-class-not-seen-yet' } });
    await callRouter(h, {});
    const [main, sub, compaction, after, unknown, plain] = await recordOf(6);
    const session = stickyKeyHash('sess-1');

    assert.deepEqual(
      [main.requestClass, main.promptIdHash, main.agentIdHash, main.contextCompacted, main.unitKey, main.unitSource],
      ['main', stickyKeyHash(prompt), null, false, session, 'x-claude-code-session-id'],
    );
    assert.deepEqual([sub.requestClass, sub.promptIdHash, sub.agentIdHash, sub.unitKey], ['subagent', stickyKeyHash(prompt), stickyKeyHash(agent), session]);
    assert.deepEqual([compaction.requestClass, compaction.promptIdHash, compaction.contextCompacted], ['compaction', null, false]);
    assert.deepEqual([after.requestClass, after.contextCompacted], ['main', true]);
    assert.equal(unknown.requestClass, 'main', 'an unknown class reads as main');
    assert.deepEqual(
      [plain.requestClass, plain.promptIdHash, plain.agentIdHash, plain.contextCompacted, plain.unitKey, plain.unitSource],
      ['main', null, null, false, plain.stickyKeyHash, 'fingerprint'],
    );
    const log = JSON.stringify(h.decisions());
    assert.ok(!log.includes(prompt) && !log.includes(agent), 'the log holds no raw prompt or agent id');
  });

  it('an auxiliary request is served but leaves the bound-session count and the binding as they were', async () => {
    h = await startHarness(A_THEN_B, { routing: { sessionAffinity: true } });
    assert.equal(servedBy(await callRouter(h, { session: 'bound', headers: hints('main') })), 'a');
    assert.equal((await routerStatus(h)).boundSessions, 1);

    // An auxiliary request of a new session: planned and served, never bound.
    const aux = await callRouter(h, { session: 'aux-only', headers: hints('auxiliary', { 'x-claude-1p-request-class': 'summary-extraction' }) });
    assert.equal(aux.status, 200, aux.text);
    assert.equal((await routerStatus(h)).boundSessions, 1, 'the auxiliary request bound nothing');

    // An auxiliary request of the bound session that another account serves leaves the binding on a.
    h.sim.injectFault('a', { kind: 'exhaust', window: '5h', resetInMs: 3_600_000 });
    assert.equal(servedBy(await callRouter(h, { session: 'bound', headers: hints('auxiliary') })), 'b');
    let status = await routerStatus(h);
    assert.equal(status.boundSessions, 1);
    assert.equal(status.accounts.find((x: { label: string }) => x.label === 'a').boundSessions, 1, 'still bound to a');

    // A compaction request is not a turn either; a main turn served elsewhere moves the binding (a lost its window).
    assert.equal(servedBy(await callRouter(h, { session: 'bound', headers: hints('compaction') })), 'b');
    assert.equal((await routerStatus(h)).accounts.find((x: { label: string }) => x.label === 'a').boundSessions, 1);
    assert.equal(servedBy(await callRouter(h, { session: 'bound', headers: hints('main') })), 'b');
    status = await routerStatus(h);
    assert.equal(status.boundSessions, 1);
    assert.equal(status.accounts.find((x: { label: string }) => x.label === 'b').boundSessions, 1, 'the main turn moved the binding to b');

    const recs = await recordOf(5);
    assert.deepEqual(
      recs.map((d) => d.requestClass),
      ['main', 'auxiliary', 'auxiliary', 'compaction', 'main'],
    );
  });
});
