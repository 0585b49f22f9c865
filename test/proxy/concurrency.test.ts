/**
 * Parallel bursts against an upstream that throttles too many requests at once on one account
 * (429, unified headers all `allowed`, no `retry-after`), and the per-account cap: requests are
 * spilled or queued, never refused while an account can serve, and no account is benched.
 */
import { strict as assert } from 'node:assert';
import type { StatusReport } from '../../src/proxy/status/status';
import { accountTooltip } from '../../src/proxy/status/tooltips';
import { accounts, callRouter, eventually, messagesBody, routerStatus, startHarness, type CallResult, type Harness } from '../support/routerHarness';

const STREAM = messagesBody({ stream: true });

/** `n` parallel streamed requests, the i-th with session `session(i)`. */
function burst(h: Harness, n: number, session: (i: number) => string): Promise<CallResult[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => callRouter(h, { session: session(i), body: STREAM })));
}

function assertAllServed(results: CallResult[]): void {
  for (const r of results) {
    assert.equal(r.status, 200, r.text.slice(0, 300));
    assert.equal(r.events.at(-1), 'message_stop', r.text.slice(-300));
  }
}

/** The decisions of `n` requests, once the log has flushed them. */
async function decisionsOf(h: Harness, n: number) {
  await eventually(() => h.decisions().length >= n, 3000, `${n} decisions`);
  return h.decisions();
}

describe('concurrency throttles and the per-account cap', function () {
  this.timeout(30_000);
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('never answers "no usable account" while an account says allowed and has room: a burst above the concurrency limit is served, and no account is benched', async () => {
    for (const labels of [['a'], ['a', 'b', 'c']]) {
      h = await startHarness(accounts(...labels), { sim: { sseIntervalMs: 20 } });
      for (const l of labels) h.sim.setConcurrencyLimit(l, 2);
      const results = await burst(h, 8, (i) => `s${i}`);
      assertAllServed(results);
      assert.ok(
        h.sim.requests.some((r) => r.fault === 'concurrency'),
        'the upstream did throttle',
      );
      const decisions = await decisionsOf(h, 8);
      assert.deepEqual(
        decisions.filter((d) => d.outcome !== 'success').map((d) => `${d.outcome} ${d.status}`),
        [],
        `${labels.length} account(s): every request served`,
      );
      const st = await routerStatus(h);
      for (const a of st.accounts) assert.equal(a.coolingUntil, null, `${a.label} is not benched (${a.coolingReason})`);
      await h.close();
      h = undefined;
    }
  });

  it("serves every parallel tool call of a bound session above its account's limit (spilled or queued), keeps the binding, and benches no account", async () => {
    h = await startHarness(accounts('a', 'b', 'c'), { routing: { sessionAffinity: true }, sim: { sseIntervalMs: 20 } });
    const first = await callRouter(h, { session: 'tool-calls', body: STREAM });
    assert.equal(first.headers['x-claude-router-account'], 'a');
    for (const l of ['a', 'b', 'c']) h.sim.setConcurrencyLimit(l, 2);

    const results = await burst(h, 8, () => 'tool-calls');
    assertAllServed(results);
    assert.ok(h.sim.account('a').maxInflight >= 2, 'the bound account took what it could');
    const st = await routerStatus(h);
    for (const a of st.accounts) assert.equal(a.coolingUntil, null, `${a.label} is not benched (${a.coolingReason})`);
    assert.deepEqual(
      st.sessions.map((s: { account: string }) => s.account),
      ['a'],
      'the session stays bound to its account',
    );
    const a = (st as StatusReport).accounts.find((x) => x.label === 'a')!;
    assert.equal(typeof a.concurrencyLimit, 'number', '/status shows the learned limit');
    assert.match(accountTooltip(a, st, Date.now()), new RegExp(`concurrency: at most ${a.concurrencyLimit} at once \\(learned from its throttles\\)`));
    const decisions = await decisionsOf(h, 9);
    assert.ok(!decisions.some((d) => d.outcome === 'no_usable_account'));
  });

  it('raises the learned limit again once the throttling stops, until the account takes full bursts', async () => {
    h = await startHarness(accounts('a'), { sim: { sseIntervalMs: 20 } });
    h.sim.setConcurrencyLimit('a', 2);
    assertAllServed(await burst(h, 6, (i) => `s${i}`));
    const learned = (await routerStatus(h)).accounts[0].concurrencyLimit;
    assert.equal(typeof learned, 'number', 'a limit was learned');

    h.sim.setConcurrencyLimit('a', null);
    const seen: (number | null)[] = [learned];
    for (let round = 0; round < 30 && seen.at(-1) !== null; round++) {
      assertAllServed(await burst(h, 8, (i) => `s${i}`));
      seen.push((await routerStatus(h)).accounts[0].concurrencyLimit);
    }
    assert.equal(seen.at(-1), null, `the limit is forgotten once the account serves past it: ${seen.join(' → ')}`);
    const limits = seen.filter((v): v is number => v !== null);
    assert.deepEqual(
      limits,
      [...limits].sort((x, y) => x - y),
      `it only rose: ${seen.join(' → ')}`,
    );

    const since = h.sim.requests.length;
    assertAllServed(await burst(h, 8, (i) => `s${i}`));
    const inflight = h.sim.requests.slice(since).map((r) => r.inflight ?? 0);
    assert.ok(Math.max(...inflight) > learned, `a full burst reaches the upstream at once again (${inflight.join(',')})`);
  });

  it('with max-inflight-per-account set, queues a burst above the cap and serves it within the waiting bound; beyond the bound, answers 429 with retry-after at once', async () => {
    h = await startHarness(accounts('a'), { routing: { maxInflightPerAccount: 2, maxWaitingRequests: 3 }, sim: { sseIntervalMs: 40 } });
    const order: CallResult[] = [];
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        callRouter(h!, { session: `s${i}`, body: STREAM }).then((r) => {
          order.push(r);
        }),
      ),
    );
    const statuses = order.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 200).length, 5, `two in flight and three waiting are served: ${statuses.join(',')}`);
    const refused = order.filter((r) => r.status === 429);
    assert.equal(refused.length, 3, statuses.join(','));
    for (const r of refused) {
      assert.match(r.headers['retry-after'] ?? '', /^[1-9]\d*$/, 'an honest retry-after');
      assert.equal(JSON.parse(r.text).error.type, 'rate_limit_error');
    }
    assert.deepEqual(statuses.slice(0, 3), [429, 429, 429], 'the ones beyond the bound are answered before any served one ends');
    assert.ok(h.sim.account('a').maxInflight <= 2, 'the cap held');
    const st = await routerStatus(h);
    assert.deepEqual(st.waiting, { requests: 0, bodyBytes: 0 }, 'nothing is left waiting');
  });

  it('answers a request that waited queue-wait-max-ms for room 429 with retry-after, before the request holding the room ends; its decision shows the wait', async () => {
    h = await startHarness(accounts('a'), { routing: { maxInflightPerAccount: 1, queueWaitMaxMs: 200 }, sim: { sseIntervalMs: 150 } });
    const order: CallResult[] = [];
    await Promise.all(
      ['first', 'second'].map((session) =>
        callRouter(h!, { session, body: STREAM }).then((r) => {
          order.push(r);
        }),
      ),
    );
    assert.deepEqual(
      order.map((r) => r.status),
      [429, 200],
    );
    assert.match(order[0].headers['retry-after'] ?? '', /^[1-9]\d*$/);
    const decisions = await decisionsOf(h, 2);
    const waited = decisions.find((d) => d.status === 429)!;
    assert.deepEqual(
      waited.attempts.map((x) => [x.account, x.result]),
      [['a', 'queued']],
    );
    assert.ok(waited.attempts[0].ms >= 150, `it waited (${waited.attempts[0].ms} ms)`);
  });

  it('waits for room on a subscription account rather than send the request to a pay-as-you-go fallback account', async () => {
    const spec = [...accounts('a'), { label: 'payg', accessToken: 'sk-ant-api03-test-payg', apiKey: true }];
    h = await startHarness(spec, {
      routing: { maxInflightPerAccount: 1 },
      configAccounts: [
        { label: 'a', accessToken: 'sk-ant-oat01-test-a', refreshToken: 'sk-ant-ort01-test-a' },
        { label: 'payg', apiKey: 'sk-ant-api03-test-payg', fallback: true },
      ],
      sim: { sseIntervalMs: 30 },
    });
    const results = await burst(h, 3, (i) => `s${i}`);
    assertAllServed(results);
    assert.deepEqual(
      results.map((r) => r.headers['x-claude-router-account']),
      ['a', 'a', 'a'],
    );
    assert.equal(h.sim.requests.filter((q) => q.account === 'payg').length, 0, 'nothing was paid for');
  });

  describe("a bound session at its account's concurrency limit", () => {
    /** a and b; session `bound` bound to a; a admits one request at a time upstream; each stream lasts about 0.6 s. */
    async function boundToA(): Promise<Harness> {
      const harness = await startHarness(accounts('a', 'b'), { routing: { sessionAffinity: true }, sim: { sseIntervalMs: 80 } });
      const first = await callRouter(harness, { session: 'bound', body: STREAM });
      assert.equal(first.headers['x-claude-router-account'], 'a');
      harness.sim.setConcurrencyLimit('a', 1);
      return harness;
    }

    /** Starts a request of another session and resolves once the upstream is answering it on a. */
    async function occupyA(harness: Harness, session: string): Promise<{ call: Promise<CallResult> }> {
      const call = callRouter(harness, { session, body: STREAM });
      await eventually(() => harness.sim.account('a').inflight === 1, 3000, `${session} in flight on a`);
      return { call };
    }

    it('waits for room on its own account with its single request, keeps its account, and the decision shows the wait — before and after the limit is learned', async () => {
      h = await boundToA();
      for (const other of ['other-1', 'other-2']) {
        const occupying = await occupyA(h, other);
        const mine = await callRouter(h, { session: 'bound', body: STREAM });
        const theirs = await occupying.call;
        assertAllServed([mine, theirs]);
        assert.equal(theirs.headers['x-claude-router-account'], 'a');
        assert.equal(mine.headers['x-claude-router-account'], 'a', `${other}: the session stays on its warm account`);
      }
      assert.equal(h.sim.requests.filter((r) => r.account === 'b').length, 0, 'nothing spilled to b');
      const decisions = await decisionsOf(h, 5);
      const waited = decisions.filter((d) => d.waits?.some((w) => w.why === 'bound_room'));
      assert.equal(waited.length, 2, JSON.stringify(decisions.map((d) => d.waits)));
      for (const d of waited) {
        const w = d.waits!.find((x) => x.why === 'bound_room')!;
        assert.equal(w.account, 'a');
        assert.equal(w.end, 'woken');
        assert.ok(w.ms > 0, `it waited (${w.ms} ms)`);
      }
      const st = await routerStatus(h);
      assert.deepEqual(
        st.sessions.map((x: { account: string }) => x.account),
        ['a', 'a', 'a'],
        'every session is bound to a',
      );
    });

    it("spills the session's second parallel request to another account at once; the binding stays", async () => {
      h = await boundToA();
      const results = await burst(h, 2, () => 'bound');
      assertAllServed(results);
      assert.deepEqual(results.map((r) => r.headers['x-claude-router-account']).sort(), ['a', 'b']);
      const decisions = await decisionsOf(h, 3);
      assert.ok(!decisions.some((d) => d.waits?.some((w) => w.why === 'bound_room')), 'the parallel request did not wait');
      const st = await routerStatus(h);
      assert.deepEqual(
        st.sessions.map((x: { account: string }) => x.account),
        ['a'],
      );
    });
  });
});
