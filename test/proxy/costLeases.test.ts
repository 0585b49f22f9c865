/**
 * Cost leases over real HTTP against the fake upstream: what requests in flight reserve on their
 * account, that the reservation goes back exactly once however the request ends (served, failed
 * over, client gone mid-stream), and that complete answers teach the model's output estimate.
 */
import { strict as assert } from 'node:assert';
import { request } from 'undici';
import { planFor } from '../../src/proxy/pipeline/plan';
import { metricsParams } from '../../src/proxy/pipeline/eligibility';
import { RouterState } from '../../src/proxy/state/routerState';
import type { EstimationReport } from '../../src/proxy/status/estimation';
import { policyFrom } from '../../src/config/schema';
import { estimateCost, inputTokensOfBody } from '../../src/routing/costEstimate';
import { accounts, callRouter, eventually, messagesBody, startHarness, type Harness } from '../support/routerHarness';

const MODEL = 'claude-sonnet-4-5-20250929';
const STREAM = messagesBody({ stream: true });
const NONE = { inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0 };

async function estimation(h: Harness): Promise<EstimationReport> {
  const res = await request(`${h.router.url}/estimation`, { headers: { 'x-claude-router-key': h.router.clientKey } });
  assert.equal(res.statusCode, 200);
  return (await res.body.json()) as EstimationReport;
}

const reservedOn = (e: EstimationReport, label: string) => e.accounts.find((a) => a.account === label)!;

describe('cost leases', function () {
  this.timeout(30_000);
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('the plan of the next request sees the reservation of the one before it on the account it tries', () => {
    const state = new RouterState(3_600_000);
    // forecast reads reservations (every strategy but fill-first records them with its inputs).
    const config = {
      policy: policyFrom({ strategy: 'forecast' }, {}),
      accounts: [{ label: 'a', kind: 'oauth' as const, fallback: false, enabled: true }],
      upstreamBaseUrl: 'http://x',
    };
    const params = metricsParams(config.policy, MODEL);
    assert.equal(planFor(state, config, params, null, 0, true).order[0].reserved, undefined, 'nothing in flight: no reservation');
    const cost = estimateCost(20_000, 'cold', 1024, 1.15);
    const lease = state.leases.acquire('a', null, { cost, model: MODEL });
    assert.deepEqual(planFor(state, config, params, null, 0, true).order[0].reserved, cost);
    state.leases.acquire('a', null, { cost, model: MODEL });
    assert.equal(planFor(state, config, params, null, 0, true).order[0].reserved?.outputTokens, 2048);
    lease.release();
    const kept = planFor(state, config, params, null, 0, true).order[0].reserved;
    assert.deepEqual(kept, cost);
    state.leases.acquire('a', null, { cost, model: MODEL });
    assert.deepEqual(kept, cost, 'a plan keeps the reservations of its moment');
    const fillFirst = { ...config, policy: policyFrom({}, {}) };
    assert.equal(planFor(state, fillFirst, params, null, 0, true).order[0].reserved, undefined, 'fill-first reads none');
  });

  it('requests in flight at once each reserve their estimate (max_tokens while the model warms up), and it all goes back when they are served', async () => {
    h = await startHarness(accounts('a'), { sim: { sseIntervalMs: 60, sseDeltaCount: 6 } });
    const running = Promise.all([callRouter(h, { session: 's1', body: STREAM }), callRouter(h, { session: 's2', body: STREAM })]);
    const perRequest = Math.ceil(inputTokensOfBody(Buffer.byteLength(STREAM)) * 1.15);
    await eventually(async () => reservedOn(await estimation(h!), 'a').inflight === 2, 3000, 'two requests in flight');
    const during = reservedOn(await estimation(h), 'a');
    // Without session affinity no account is known to hold the prompt: it is written (cold).
    assert.deepEqual(during.reserved, { inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 2 * perRequest, outputTokens: 2 * 1024 });
    for (const r of await running) assert.equal(r.events.at(-1), 'message_stop');
    const after = await estimation(h);
    assert.deepEqual(reservedOn(after, 'a'), { account: 'a', inflight: 0, reserved: NONE });
    assert.deepEqual(
      after.models.map((m) => [m.model, m.samples, m.state]),
      [[MODEL, 2, 'warming_up']],
    );
  });

  it('a session on its bound account reserves mostly cache reads', async () => {
    h = await startHarness(accounts('a'), { routing: { sessionAffinity: true }, sim: { sseIntervalMs: 60, sseDeltaCount: 6 } });
    await callRouter(h, { session: 'bound', body: STREAM });
    const running = callRouter(h, { session: 'bound', body: STREAM });
    await eventually(async () => reservedOn(await estimation(h!), 'a').inflight === 1, 3000, 'in flight');
    const r = reservedOn(await estimation(h), 'a').reserved;
    assert.ok(r.cacheReadTokens > 0 && r.cacheReadTokens > 5 * r.cacheWriteTokens, JSON.stringify(r));
    await running;
  });

  it('releases the reservation of a failed attempt once and reserves on the account that serves instead', async () => {
    h = await startHarness(accounts('a', 'b'));
    h.sim.injectFault('a', { kind: 'server_error', status: 500 });
    const r = await callRouter(h, { session: 's', body: STREAM });
    assert.equal(r.headers['x-claude-router-account'], 'b');
    const e = await estimation(h);
    assert.deepEqual(
      e.accounts.map((a) => [a.account, a.inflight, a.reserved]),
      [
        ['a', 0, NONE],
        ['b', 0, NONE],
      ],
    );
    assert.equal(e.models[0].samples, 1, 'only the served answer is learned');
  });

  it('a client that aborts mid-stream leaves no reservation behind, and its cut answer teaches the estimate nothing', async () => {
    h = await startHarness(accounts('a'), { sim: { sseIntervalMs: 150, sseDeltaCount: 30 } });
    const abort = new AbortController();
    const res = await request(`${h.router.url}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-claude-code-session-id': 'gone', authorization: `Bearer ${h.router.clientKey}` },
      body: STREAM,
      signal: abort.signal,
    });
    assert.equal(res.statusCode, 200);
    const reader = res.body[Symbol.asyncIterator]();
    await reader.next(); // the stream is committed and flowing
    assert.equal(reservedOn(await estimation(h), 'a').reserved.outputTokens, 1024, 'reserved while it streams');
    abort.abort();
    await reader.next().catch(() => undefined);
    await eventually(async () => reservedOn(await estimation(h!), 'a').inflight === 0, 5000, 'the lease released');
    const e = await estimation(h);
    assert.deepEqual(reservedOn(e, 'a').reserved, NONE);
    assert.deepEqual(e.models, []);
    await eventually(() => h!.decisions().some((d) => d.outcome === 'client_abort'), 3000, 'the abort on record');
  });

  it('after 20 complete answers leases the p95 of what the model returned (times the margin) instead of max_tokens', async () => {
    const reply = 'x'.repeat(400); // 100 output tokens in the fake upstream
    h = await startHarness(accounts('a'), { routing: { costLeaseMargin: 1.2 }, sim: { replyText: () => reply } });
    for (let i = 0; i < 19; i++) await callRouter(h, { session: `s${i}`, body: STREAM });
    assert.equal((await estimation(h)).models[0].state, 'warming_up');
    await callRouter(h, { session: 's19', body: STREAM });
    const e = await estimation(h);
    assert.deepEqual(
      e.models.map((m) => [m.state, m.samples, m.quantileTokens, m.leaseTokens]),
      [['predicting', 20, 100, 120]],
    );
    assert.equal(e.margin, 1.2);
    h.sim.injectFault('a', { kind: 'slow_first_byte', delayMs: 500 });
    const running = callRouter(h, { session: 's20', body: STREAM });
    await eventually(async () => reservedOn(await estimation(h!), 'a').inflight === 1, 3000, 'in flight');
    assert.equal(reservedOn(await estimation(h), 'a').reserved.outputTokens, 120, 'the quantile is leased, not max_tokens 1024');
    await running;
  });

  it('GET /estimation needs the client key', async () => {
    h = await startHarness(accounts('a'));
    const res = await request(`${h.router.url}/estimation`);
    assert.equal(res.statusCode, 401);
    await res.body.dump();
  });
});
