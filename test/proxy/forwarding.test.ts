import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import type { Logger } from '../../src/proxy/log';
import { stickyKeyHash } from '../../src/routing/identify';
import { clientHeaderList } from '../../src/proxy/upstream/agent';
import { accounts, callRouter, messagesBody, routerStatus, startHarness, type Harness } from '../support/routerHarness';

describe('proxy forwarding', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness(accounts('a', 'b'));
  });
  afterEach(() => h.close());

  it('serves a streamed answer with the real event sequence and names the serving account', async () => {
    const r = await callRouter(h, { session: 's1', body: messagesBody({ stream: true }) });
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'], /text\/event-stream/);
    assert.deepEqual(
      r.events.filter((e) => e !== 'ping'),
      ['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'],
    );
    assert.ok(['a', 'b'].includes(r.headers['x-claude-router-account']));
  });

  it('serves JSON and forwards the body byte for byte, query kept, client credentials replaced', async () => {
    const body = messagesBody({ text: 'exact bytes ✓ with unicode' }).replace('{', '{ ');
    const r = await callRouter(h, { session: 's1', body, headers: { 'x-api-key': h.router.clientKey, cookie: 'c=1' } });
    assert.equal(r.status, 200);
    const json = JSON.parse(r.text);
    assert.equal(json.type, 'message');
    const seen = h.sim.requests.find((q) => q.path.startsWith('/v1/messages'))!;
    assert.equal(seen.path, '/v1/messages?beta=true');
    assert.equal(seen.bodySha256, createHash('sha256').update(body).digest('hex'));
    assert.equal(seen.headers.authorization, `Bearer sk-ant-oat01-test-${r.headers['x-claude-router-account']}`);
    assert.equal(seen.headers['x-api-key'], undefined);
    assert.equal(seen.headers.cookie, undefined);
    assert.equal(seen.headers['anthropic-beta'], 'claude-code-20250219,oauth-2025-04-20');
    assert.ok(!JSON.stringify(seen.headers).includes(h.router.clientKey), 'the local key never goes upstream');
  });

  it('learns quota from response headers and reports it in /status', async () => {
    await callRouter(h, { session: 's1' });
    const st = await routerStatus(h);
    const served = st.accounts.find((a: any) => a.evidence.freshness === 'fresh');
    assert.ok(served, 'one account has fresh evidence');
    assert.equal(typeof served.session.used, 'number');
    assert.match(served.session.resetsAt, /^\d{4}-/);
    assert.equal(st.counters.requests, 1);
    assert.equal(st.counters.served, 1);
  });

  it('forwards count_tokens and models without binding or counting them as requests', async () => {
    const c = await callRouter(h, { path: '/v1/messages/count_tokens?beta=true', session: 's1' });
    assert.equal(c.status, 200);
    assert.equal(typeof JSON.parse(c.text).input_tokens, 'number');
    const m = await callRouter(h, { path: '/v1/models', method: 'GET' });
    assert.equal(m.status, 200);
    assert.ok(Array.isArray(JSON.parse(m.text).data));
    const st = await routerStatus(h);
    assert.equal(st.counters.requests, 0);
  });

  it('returns a 400 from upstream unchanged and does not try another account', async () => {
    h.sim.injectFault('a', { kind: 'bad_request' });
    h.sim.injectFault('b', { kind: 'bad_request' });
    const r = await callRouter(h, { session: 's1' });
    assert.equal(r.status, 400);
    assert.equal(JSON.parse(r.text).error.type, 'invalid_request_error');
    assert.equal(h.sim.requests.filter((q) => q.path.startsWith('/v1/messages')).length, 1);
  });

  it('writes one decision record per request with the session key hash (never the id) and every candidate', async () => {
    await callRouter(h, { session: 'sess-1' });
    await callRouter(h, { body: messagesBody({ userId: JSON.stringify({ device_id: 'd', account_uuid: '', session_id: 'sess-2' }) }) });
    await h.router.close(); // flush
    const d = h.decisions();
    assert.equal(d.length, 2);
    assert.deepEqual(
      d.map((x) => [x.stickyKeyHash, x.stickyKeySource, x.stickyKind]),
      [
        [stickyKeyHash('sess-1'), 'header', 'session'],
        [stickyKeyHash('sess-2'), 'metadata', 'session'],
      ],
    );
    assert.equal(d[0].schemaVersion, 2);
    assert.equal(d[0].candidates.length, 2);
    assert.equal(d[0].candidates[0].verdict, 'selected');
    assert.equal(d[0].outcome, 'success');
    assert.ok(d[0].usage && d[0].usage.outputTokens > 0);
  });

  it('logs one line per decision at debug level, and builds none when debug is off', async () => {
    const lines: string[] = [];
    let debug = true;
    const log: Logger = { debug: (m) => lines.push(m), info() {}, warn() {}, error() {}, debugEnabled: () => debug };
    const logged = await startHarness(accounts('a'), { log });
    try {
      await callRouter(logged, { session: 'sess-debug' });
      debug = false;
      await callRouter(logged, { session: 'sess-quiet' });
    } finally {
      await logged.close();
    }
    const decisions = lines.filter((l) => l.startsWith('decision '));
    assert.equal(decisions.length, 1, lines.join('\n'));
    assert.match(decisions[0], new RegExp(`^decision req_router_\\S+ session=${stickyKeyHash('sess-debug')} reason=\\S+ served=a outcome=success$`));
  });

  it('records the decision of a request still streaming when the router shuts down', async () => {
    const slow = await startHarness(accounts('a'), { sim: { sseIntervalMs: 100, sseDeltaCount: 100 } });
    try {
      const pending = callRouter(slow, { session: 'sess-shutdown', body: messagesBody({ stream: true }) }).catch(() => undefined);
      for (let i = 0; i < 50 && (await routerStatus(slow)).inflight === 0; i++) await new Promise((r) => setTimeout(r, 20));
      await slow.router.close();
      await pending;
      const d = slow.decisions();
      assert.deepEqual(
        d.map((x) => [x.stickyKeyHash, x.outcome]),
        // Ended by the router (an overloaded_error event: test/proxy/shutdown.test.ts), not by the client.
        [[stickyKeyHash('sess-shutdown'), 'error_after_commit']],
      );
    } finally {
      await slow.close();
    }
  });
});

describe('errors no step handles', () => {
  it('answers an Anthropic-shaped 500 when handling throws before the answer, logs it once, and leaves nothing running', async () => {
    const errors: string[] = [];
    const log: Logger = { debug() {}, info() {}, warn() {}, error: (m) => errors.push(m) };
    const h = await startHarness(accounts('a'), { log });
    try {
      // The decision sink breaks: reading it throws at once; writing it throws after the answer went out.
      const sink = {
        append: () => {
          throw new Error('append broke');
        },
        recent: () => {
          throw new Error('recent broke');
        },
        query: () => {
          throw new Error('query broke');
        },
      };
      (h.router.engine as unknown as { services: { decisions: unknown } }).services.decisions = sink;
      const listed = await callRouter(h, { path: '/decisions', method: 'GET' });
      assert.equal(listed.status, 500);
      assert.equal(JSON.parse(listed.text).error.type, 'api_error');
      const served = await callRouter(h, { session: 's1' });
      assert.equal(served.status, 200, 'an answer already sent stays sent');
      assert.equal(JSON.parse(served.text).type, 'message');
      const st = await routerStatus(h);
      assert.equal(st.counters.errors, 2);
      assert.equal(errors.filter((e) => e.startsWith('internal error')).length, 2, errors.join('\n'));
      assert.ok(errors.some((e) => e.includes('query broke')) && errors.some((e) => e.includes('append broke')));
    } finally {
      const t0 = Date.now();
      await h.close();
      assert.ok(Date.now() - t0 < 4_000, 'close() found no request still counted as running');
    }
  });
});

describe('response headers', () => {
  it("drop hop-by-hop headers, the upstream's length and cookies, and another router's own headers; ours come last", () => {
    const list = clientHeaderList(
      {
        'content-type': 'application/json',
        'content-length': '10',
        connection: 'keep-alive',
        'transfer-encoding': 'chunked',
        'set-cookie': ['a=1', 'b=2'],
        link: ['<a>', '<b>'],
        'x-claude-router-account': 'inner',
        'x-claude-router-request-id': 'req_inner',
        'request-id': 'req_upstream',
      },
      ['x-claude-router-account', 'outer'],
    );
    assert.deepEqual(list, ['content-type', 'application/json', 'link', ['<a>', '<b>'], 'request-id', 'req_upstream', 'x-claude-router-account', 'outer']);
  });
});
