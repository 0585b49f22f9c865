import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { accounts, callRouter, eventually, messagesBody, routerStatus, startHarness, type Harness } from '../support/routerHarness';

const streamBody = () => messagesBody({ stream: true });
const messageRequests = (h: Harness, label?: string) => h.sim.requests.filter((q) => q.path.startsWith('/v1/messages?') && (label === undefined || q.account === label));

/** Makes `label` the rank-0 account by giving it the soonest weekly reset (expiry-first). */
function specsWithFirst(first: string, ...others: string[]) {
  return [
    { ...accounts(first)[0], sevenDayResetInMs: 86_400_000, initialSevenDayUsed: 0.5 },
    ...others.map((o, i) => ({ ...accounts(o)[0], sevenDayResetInMs: (3 + i) * 86_400_000, initialSevenDayUsed: 0.1 })),
  ];
}

describe('proxy failover', () => {
  let h: Harness;
  afterEach(() => h?.close());

  it('rotates on an exhausted 5h window and cools the account until that reset', async () => {
    h = await startHarness(specsWithFirst('a', 'b'));
    const first = await callRouter(h, { session: 's1' });
    assert.equal(first.headers['x-claude-router-account'], 'a');
    h.sim.injectFault('a', { kind: 'exhaust', window: '5h', resetInMs: 2 * 3_600_000 });
    const r = await callRouter(h, { session: 's1', body: streamBody() });
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-claude-router-account'], 'b');
    assert.equal(r.events.filter((e) => e === 'message_start').length, 1);
    const st = await routerStatus(h);
    const a = st.accounts.find((x: any) => x.label === 'a');
    assert.equal(a.usable, false);
    assert.equal(a.coolingReason, 'window_exhausted');
    assert.deepEqual(a.coolingWindows, ['5h']);
    const untilMs = Date.parse(a.coolingUntil);
    assert.ok(Math.abs(untilMs - (Date.now() + 2 * 3_600_000)) < 10_000, 'cooldown ends at the window reset');
  });

  it('does not re-probe an account whose window resets far in the future', async () => {
    h = await startHarness(specsWithFirst('a', 'b'));
    h.sim.injectFault('a', { kind: 'exhaust', window: '7d', resetInMs: 6 * 86_400_000 });
    for (let i = 0; i < 5; i++) {
      const r = await callRouter(h, { session: `s${i}` });
      assert.equal(r.status, 200);
      assert.equal(r.headers['x-claude-router-account'], 'b');
    }
    assert.equal(messageRequests(h, 'a').length, 1, 'the exhausted account was tried once, not on every request');
  });

  it('follows retry-after on a throttle 429 and serves from another account', async () => {
    h = await startHarness(specsWithFirst('a', 'b'));
    await callRouter(h, { session: 's0' });
    h.sim.injectFault('a', { kind: 'throttle', retryAfterS: 30 });
    const r = await callRouter(h, { session: 's1', body: streamBody() });
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-claude-router-account'], 'b');
    const a = (await routerStatus(h)).accounts.find((x: any) => x.label === 'a');
    assert.equal(a.coolingReason, 'throttle');
    const left = Date.parse(a.coolingUntil) - Date.now();
    assert.ok(left > 25_000 && left <= 31_000, `cooldown follows retry-after (${left} ms left)`);
  });

  it('treats a header-less 429 as no capacity signal: no cooldown, one try elsewhere', async () => {
    h = await startHarness(specsWithFirst('a', 'b'));
    await callRouter(h, { session: 's0' });
    h.sim.injectFault('a', { kind: 'headerless_429' });
    const r = await callRouter(h, { session: 's1' });
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-claude-router-account'], 'b');
    const a = (await routerStatus(h)).accounts.find((x: any) => x.label === 'a');
    assert.equal(a.coolingUntil, null);
    assert.equal(a.usable, true);
  });

  it('passes a header-less 429 through when the second account answers the same', async () => {
    h = await startHarness(specsWithFirst('a', 'b', 'c'));
    for (const l of ['a', 'b', 'c']) h.sim.injectFault(l, { kind: 'headerless_429' });
    const r = await callRouter(h, { session: 's1' });
    assert.equal(r.status, 429);
    assert.equal(JSON.parse(r.text).error.message, 'Error');
    assert.equal(messageRequests(h).length, 2, 'at most one attempt on another account');
  });

  it('skips an account only for the model whose scoped weekly window is exhausted', async () => {
    const spec = specsWithFirst('a', 'b').map((x) => ({ ...x, scopedWindows: { sonnet: { limitTokens: 1_000_000 }, opus: { limitTokens: 1_000_000 } } }));
    h = await startHarness(spec);
    h.sim.injectFault('a', { kind: 'exhaust', window: '7d_sonnet', resetInMs: 2 * 86_400_000 });
    const sonnet = await callRouter(h, { session: 's1', body: messagesBody({ model: 'claude-sonnet-4-5-20250929' }) });
    assert.equal(sonnet.status, 200);
    assert.equal(sonnet.headers['x-claude-router-account'], 'b');
    const opus = await callRouter(h, { session: 's2', body: messagesBody({ model: 'claude-opus-4-1-20250805' }) });
    assert.equal(opus.headers['x-claude-router-account'], 'a', 'the account still serves other models');
    const a = (await routerStatus(h)).accounts.find((x: any) => x.label === 'a');
    assert.equal(a.coolingUntil, null, 'no account-wide cooldown');
    assert.equal(a.scoped.sonnet.status, 'rejected');
  });

  it('moves a request the account cannot serve ("Extra usage is required") without cooling the account', async () => {
    h = await startHarness(specsWithFirst('a', 'b'));
    await callRouter(h, { session: 's0' });
    h.sim.injectFault('a', { kind: 'entitlement_429' });
    const r = await callRouter(h, { session: 's1' });
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-claude-router-account'], 'b');
    const a = (await routerStatus(h)).accounts.find((x: any) => x.label === 'a');
    assert.equal(a.coolingUntil, null);
    assert.equal((await callRouter(h, { session: 's2' })).headers['x-claude-router-account'], 'a');
  });

  it('rotates when a 200 stream starts with an overloaded error, before any byte reaches the client', async () => {
    h = await startHarness(specsWithFirst('a', 'b'));
    await callRouter(h, { session: 's0' });
    h.sim.injectFault('a', { kind: 'overloaded_in_stream' });
    const r = await callRouter(h, { session: 's1', body: streamBody() });
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-claude-router-account'], 'b');
    assert.ok(!r.events.includes('error'), 'the client never sees the first error');
    assert.equal(r.events.filter((e) => e === 'message_start').length, 1);
    assert.ok(r.events.includes('message_stop'));
  });

  it('ends the stream with one clean error when upstream fails after content (no splice)', async () => {
    h = await startHarness(specsWithFirst('a', 'b'));
    await callRouter(h, { session: 's0' });
    h.sim.injectFault('a', { kind: 'error_after_content' });
    const r = await callRouter(h, { session: 's1', body: streamBody() });
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-claude-router-account'], 'a');
    assert.equal(r.events.filter((e) => e === 'message_start').length, 1, 'never a second message_start');
    assert.equal(r.events[r.events.length - 1], 'error');
    assert.equal(messageRequests(h, 'b').length, 0, 'no retry after commit');
    await h.router.close();
    assert.equal(h.decisions().at(-1)!.outcome, 'error_after_commit');
  });

  it('marks a stream cut before message_stop as truncated and tells the client', async () => {
    h = await startHarness(specsWithFirst('a', 'b'));
    await callRouter(h, { session: 's0' });
    h.sim.injectFault('a', { kind: 'truncate' });
    const r = await callRouter(h, { session: 's1', body: streamBody() });
    assert.equal(r.status, 200);
    assert.ok(!r.events.includes('message_stop'));
    assert.equal(r.events[r.events.length - 1], 'error');
    assert.match(r.text, /ended before message_stop/);
    await h.router.close();
    assert.equal(h.decisions().at(-1)!.outcome, 'truncated');
  });

  it('refreshes an expired token once for two concurrent requests and never flags re-login', async () => {
    h = await startHarness(specsWithFirst('a', 'b'));
    await callRouter(h, { session: 's0' });
    await h.router.poller.tick(); // b's quota is read: the busy first choice leaves no account without evidence to probe
    h.sim.injectFault('a', { kind: 'expire_token' });
    const [r1, r2] = await Promise.all([callRouter(h, { session: 's1' }), callRouter(h, { session: 's2' })]);
    assert.equal(r1.status, 200);
    assert.equal(r2.status, 200);
    assert.equal(r1.headers['x-claude-router-account'], 'a');
    assert.equal(r2.headers['x-claude-router-account'], 'a');
    assert.equal(h.sim.refreshCount('a'), 1, 'one refresh shared by both requests');
    const a = (await routerStatus(h)).accounts.find((x: any) => x.label === 'a');
    assert.equal(a.needsSignIn, false);
    // The rotated pair was persisted: a restart would use the new refresh token.
    const stored = JSON.parse(readFileSync(`${h.stateDir}/credentials.json`, 'utf8'));
    assert.equal(stored.accounts.a.refreshToken, h.sim.account('a').refreshToken);
  });

  it('sends a large body whole on every call: after a token refresh and after a rotation', async () => {
    // ~300 KB arrives in several chunks; each upstream call reads them afresh.
    const big = messagesBody({ stream: true, text: 'x'.repeat(300_000) });
    const sha = createHash('sha256').update(big).digest('hex');
    h = await startHarness(specsWithFirst('a', 'b', 'c'));
    h.sim.injectFault('a', { kind: 'expire_token' });
    const refreshed = await callRouter(h, { session: 's1', body: big });
    assert.equal(refreshed.status, 200);
    assert.equal(refreshed.headers['x-claude-router-account'], 'a');
    assert.equal(h.sim.refreshCount('a'), 1);
    h.sim.injectFault('a', { kind: 'overloaded_529' });
    const rotated = await callRouter(h, { session: 's2', body: big });
    assert.equal(rotated.status, 200);
    assert.equal(rotated.headers['x-claude-router-account'], 'b');
    const served = messageRequests(h).filter((q) => q.status === 200);
    assert.equal(served.length, 2);
    for (const q of served) {
      assert.equal(q.bodyBytes, Buffer.byteLength(big));
      assert.equal(q.bodySha256, sha);
    }
  });

  /**
   * A token endpoint in front of the sim's whose first `overtaken` grants are refused as soon as
   * they are issued — as when another router's refresh or an early expiry overtakes a fresh pair.
   */
  async function overtakingTokenEndpoint(overtaken: number) {
    let grants = 0;
    let target = '';
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void (async () => {
          const answer = await request(target, { method: 'POST', headers: { 'content-type': String(req.headers['content-type']) }, body: Buffer.concat(chunks) });
          const text = await answer.body.text();
          if (answer.statusCode === 200 && grants++ < overtaken) h.sim.injectFault('a', { kind: 'expire_token' });
          res.writeHead(answer.statusCode, { 'content-type': 'application/json' }).end(text);
        })();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    after(() => server.close());
    return {
      url: (simTokenUrl: string) => {
        target = simTokenUrl;
        return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/oauth/token`;
      },
      grants: () => grants,
    };
  }

  it('refreshes again when a fresh pair is refused at once: the request stays on its account, which is not flagged for sign-in', async () => {
    const endpoint = await overtakingTokenEndpoint(2);
    h = await startHarness(specsWithFirst('a', 'b'), { tokenUrl: endpoint.url });
    await callRouter(h, { session: 's0' });
    h.sim.injectFault('a', { kind: 'expire_token' });
    const r = await callRouter(h, { session: 's1', body: streamBody() });
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-claude-router-account'], 'a');
    assert.equal(endpoint.grants(), 3, 'the first two pairs were overtaken; the third served');
    const a = (await routerStatus(h)).accounts.find((x: any) => x.label === 'a');
    assert.equal(a.needsSignIn, false);
    assert.equal(a.usable, true);
  });

  it('flags sign-in when every fresh pair is refused: the request moves to another account', async () => {
    const endpoint = await overtakingTokenEndpoint(Infinity);
    h = await startHarness(specsWithFirst('a', 'b'), { tokenUrl: endpoint.url });
    await callRouter(h, { session: 's0' });
    h.sim.injectFault('a', { kind: 'expire_token' });
    const r = await callRouter(h, { session: 's1', body: streamBody() });
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-claude-router-account'], 'b');
    assert.equal(endpoint.grants(), 3, 'refreshed at most three times');
    const a = (await routerStatus(h)).accounts.find((x: any) => x.label === 'a');
    assert.equal(a.needsSignIn, true);
  });

  it('moves the request to another account and flags sign-in when a 401 cannot be refreshed', async () => {
    h = await startHarness(specsWithFirst('a', 'b'), {
      configAccounts: [
        { label: 'a', accessToken: 'sk-ant-oat01-test-a' }, // no refresh token
        { label: 'b', accessToken: 'sk-ant-oat01-test-b', refreshToken: 'sk-ant-ort01-test-b' },
      ],
    });
    await callRouter(h, { session: 's0' });
    h.sim.injectFault('a', { kind: 'expire_token' });
    const r = await callRouter(h, { session: 's1', body: streamBody() });
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-claude-router-account'], 'b');
    const a = (await routerStatus(h)).accounts.find((x: any) => x.label === 'a');
    assert.equal(a.needsSignIn, true);
    assert.equal(a.usable, false);
  });

  it('answers 429 with retry-after for the earliest recovery when every account is exhausted', async () => {
    h = await startHarness(specsWithFirst('a', 'b'));
    h.sim.injectFault('a', { kind: 'exhaust', window: '5h', resetInMs: 40 * 60_000 });
    h.sim.injectFault('b', { kind: 'exhaust', window: '7d', resetInMs: 3 * 86_400_000 });
    const r = await callRouter(h, { session: 's1', body: streamBody() });
    assert.equal(r.status, 429);
    const err = JSON.parse(r.text);
    assert.equal(err.type, 'error');
    assert.equal(err.error.type, 'rate_limit_error');
    assert.match(err.error.message, /"a" \(5h window\)/);
    // Said the way Anthropic says it, so Claude Code shows "limit reached · resets …" instead of retrying for an hour.
    assert.equal(r.headers['anthropic-ratelimit-unified-status'], 'rejected');
    assert.equal(r.headers['anthropic-ratelimit-unified-representative-claim'], 'five_hour');
    assert.ok(Math.abs(Number(r.headers['anthropic-ratelimit-unified-reset']) * 1000 - (Date.now() + 40 * 60_000)) < 5_000);
    const retryAfter = Number(r.headers['retry-after']);
    assert.ok(retryAfter > 38 * 60 && retryAfter <= 40 * 60 + 1, `retry-after ${retryAfter}`);
    // A second request goes nowhere upstream: both accounts are known to be cooling.
    const before = messageRequests(h).length;
    const again = await callRouter(h, { session: 's2' });
    assert.equal(again.status, 429);
    assert.equal(messageRequests(h).length, before);
  });

  it('rotates on 529 overloaded and returns the last 529 when every account is overloaded (transient wait off)', async () => {
    h = await startHarness(specsWithFirst('a', 'b'));
    h.sim.injectFault('a', { kind: 'overloaded_529' });
    const ok = await callRouter(h, { session: 's1' });
    assert.equal(ok.headers['x-claude-router-account'], 'b');
    // With the transient wait on, the paused request below would be held until an account recovers (test/proxy/blips.test.ts).
    h = (await h.close(), await startHarness(specsWithFirst('a', 'b'), { routing: { transientWaitMaxMs: 0 } }));
    h.sim.injectFault('a', { kind: 'overloaded_529' });
    h.sim.injectFault('b', { kind: 'overloaded_529' });
    const r = await callRouter(h, { session: 's1' });
    assert.equal(r.status, 529);
    assert.equal(JSON.parse(r.text).error.type, 'overloaded_error');
    // While both pause, the router answers itself — as the overload it is, not as the user's rate limit.
    const before = messageRequests(h).length;
    const paused = await callRouter(h, { session: 's2' });
    assert.equal(paused.status, 529);
    const err = JSON.parse(paused.text);
    assert.equal(err.error.type, 'overloaded_error');
    assert.match(err.error.message, /overloaded/);
    const retryAfter = Number(paused.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`);
    assert.equal(paused.headers['anthropic-ratelimit-unified-status'], undefined);
    assert.equal(messageRequests(h).length, before, 'nothing went upstream');
    await h.router.close();
    const record = h.decisions().at(-1)!;
    assert.equal(record.outcome, 'no_usable_account');
    assert.equal(record.status, 529, 'the decision record has the status the client got');
  });

  it('answers 503, not a rate limit, while every account pauses after server errors (transient wait off)', async () => {
    h = await startHarness(specsWithFirst('a', 'b'), { routing: { transientWaitMaxMs: 0 } });
    h.sim.injectFault('a', { kind: 'server_error', status: 500 });
    h.sim.injectFault('b', { kind: 'server_error', status: 500 });
    const first = await callRouter(h, { session: 's1' });
    assert.equal(first.status, 500);
    const paused = await callRouter(h, { session: 's2' });
    assert.equal(paused.status, 503);
    assert.equal(JSON.parse(paused.text).error.type, 'api_error');
    assert.ok(Number(paused.headers['retry-after']) >= 1);
  });

  it('leaves every in-flight count at zero after clients abort mid-stream and while waiting', async () => {
    h = await startHarness(specsWithFirst('a', 'b'), { sim: { sseIntervalMs: 50, sseDeltaCount: 40 } });
    h.sim.injectFault('a', { kind: 'slow_first_byte', delayMs: 2_000 });
    const aborts = [0, 1, 2, 3].map(async (i) => {
      const ac = new AbortController();
      const p = callRouter(h, { session: `s${i}`, body: streamBody(), signal: ac.signal }).catch(() => undefined);
      setTimeout(() => ac.abort(), 150 + i * 50);
      return p;
    });
    await eventually(async () => (await routerStatus(h)).inflight > 0, 2000, 'requests in flight');
    await Promise.all(aborts);
    await eventually(async () => (await routerStatus(h)).inflight === 0, 5000, 'in-flight back to zero');
    const st = await routerStatus(h);
    for (const a of st.accounts) assert.equal(a.inflight, 0);
    assert.ok(st.counters.clientAborts >= 1);
    // A request abandoned while upstream had it keeps that attempt on record (upstream may charge it).
    await h.router.close();
    const abandoned = h.decisions().filter((d) => d.outcome === 'client_abort');
    assert.ok(abandoned.length >= 1);
    for (const d of abandoned)
      assert.ok(
        d.attempts.some((a) => a.result === 'client_abort'),
        JSON.stringify(d.attempts),
      );
  });

  it('relays an error page from in front of the API as it came, unless it is too large to be an error answer', async () => {
    h = await startHarness(specsWithFirst('a', 'b'));
    for (const label of ['a', 'b']) h.sim.injectFault(label, { kind: 'html_error', status: 502, bytes: 2_000 });
    const small = await callRouter(h, { session: 's1' });
    assert.equal(small.status, 502);
    assert.match(String(small.headers['content-type']), /text\/html/);
    assert.match(small.text, /^<html>.*<\/html>$/s);

    await h.close(); // both accounts now cool down after their 502s: start afresh
    h = await startHarness(specsWithFirst('a', 'b'));
    for (const label of ['a', 'b']) h.sim.injectFault(label, { kind: 'html_error', status: 503, bytes: 3_000_000 });
    const huge = await callRouter(h, { session: 's2' });
    assert.equal(huge.status, 503);
    assert.match(String(huge.headers['content-type']), /application\/json/);
    const body = JSON.parse(huge.text) as { type: string; error: { type: string; message: string } };
    assert.equal(body.type, 'error');
    assert.match(body.error.message, /not relayed/);
    assert.equal(Number(huge.headers['content-length']), Buffer.byteLength(huge.text));
  });
});
