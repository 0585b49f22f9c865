import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { startRouter, type RunningRouter } from '../../src/cli/runtime';
import { silentLogger } from '../../src/proxy/log';
import { eventually } from '../support/routerHarness';
import { startStalledUpstream, type StalledUpstream } from '../support/stalledUpstream';

const MB = 1024 * 1024;

describe('memory budget for request bodies (routing.max-buffered-body-bytes)', function () {
  this.timeout(60_000);
  let upstream: StalledUpstream;
  let router: RunningRouter;
  let stateDir: string;
  beforeEach(async () => {
    upstream = await startStalledUpstream();
    stateDir = mkdtempSync(path.join(os.tmpdir(), 'router-budget-'));
    router = await startRouter({
      config: {
        listen: { host: '127.0.0.1', port: 0 },
        upstream: { baseUrl: upstream.url, tokenUrl: `${upstream.url}/token` },
        stateDir,
        clientKey: 'test-client-key-0123456789',
        accounts: [{ label: 'a', accessToken: 'sk-ant-oat01-test-a' }],
        routing: { maxBufferedBodyBytes: 32 * MB },
      },
      log: silentLogger,
      pollUsage: false,
      env: {},
    });
  });
  afterEach(async () => {
    upstream.release();
    await router.close();
    await upstream.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  /** A Messages request with a `size`-byte JSON body, from a Claude Code session (its header) unless `session` is null. */
  async function post(size: number, session: string | null = 'budget') {
    const pad = 'x'.repeat(size - 200);
    const body = JSON.stringify({ model: 'claude-sonnet-4-5-20250929', max_tokens: 8, messages: [{ role: 'user', content: pad }] }).padEnd(size, ' ');
    const res = await request(`${router.url}/v1/messages`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${router.clientKey}`,
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
        ...(session === null ? {} : { 'x-claude-code-session-id': session }),
      },
      body,
    });
    return { status: res.statusCode, retryAfter: res.headers['retry-after'], text: await res.body.text() };
  }

  it('takes the bodies that fit, answers the rest at once with 503 overloaded_error and retry-after, and takes new ones once the held ones are answered', async () => {
    const calls = Array.from({ length: 40 }, () => post(4 * MB));
    // 8 × 4 MB fill the 32 MB budget; the other 32 are answered while the 8 wait upstream.
    await eventually(() => upstream.held() === 8, 20_000, '8 bodies upstream');
    const settled = await Promise.all(calls.map((c) => Promise.race([c, new Promise((r) => setTimeout(() => r('pending'), 2_000))])));
    const refused = settled.filter((r) => r !== 'pending') as Awaited<ReturnType<typeof post>>[];
    assert.equal(refused.length, 32, 'the 32 that did not fit are answered without waiting');
    for (const r of refused) {
      assert.equal(r.status, 503);
      assert.equal(r.retryAfter, '2');
      const error = (JSON.parse(r.text) as { error: { type: string; message: string } }).error;
      assert.equal(error.type, 'overloaded_error');
      assert.match(error.message, /max-buffered-body-bytes/);
    }
    upstream.release();
    const served = await Promise.all(calls);
    assert.equal(served.filter((r) => r.status === 200).length, 8);
    // Their bytes were given back: a full 31 MB body fits again.
    assert.equal((await post(31 * MB)).status, 200);
  });

  it('a body without a session header is parsed whole: its parse counts against the budget, past which the 503 with retry-after comes at once and nothing is lost', async () => {
    // 4 MB bodies that will be parsed count three times their size (body, text, tree): 2 fit the 32 MB budget, not 8.
    const calls = Array.from({ length: 10 }, () => post(4 * MB, null));
    await eventually(() => upstream.held() === 2, 20_000, '2 bodies upstream');
    const settled = await Promise.all(calls.map((c) => Promise.race([c, new Promise((r) => setTimeout(() => r('pending'), 2_000))])));
    const refused = settled.filter((r) => r !== 'pending') as Awaited<ReturnType<typeof post>>[];
    assert.equal(refused.length, 8, 'the 8 whose parse did not fit are answered without waiting');
    for (const r of refused) {
      assert.equal(r.status, 503);
      assert.equal(r.retryAfter, '2');
      const answer = JSON.parse(r.text) as { type: string; error: { type: string; message: string } };
      assert.equal(answer.type, 'error');
      assert.equal(answer.error.type, 'overloaded_error');
      assert.match(answer.error.message, /max-buffered-body-bytes/);
    }
    assert.equal(upstream.held(), 2, 'none of the refused reached the upstream');
    upstream.release();
    assert.deepEqual(
      (await Promise.all(calls)).map((r) => r.status).filter((s) => s === 200),
      [200, 200],
    );
    // The parse's share was given back with the bodies: each refused request, sent again, is served.
    for (let i = 0; i < 8; i++) assert.equal((await post(4 * MB, null)).status, 200);
    // And a full 31 MB body without a session header still fits the idle 32 MB budget.
    assert.equal((await post(31 * MB, null)).status, 200);
  });

  it('a body found to need a parse only once it has arrived (chunked, no session header) takes its parse share then, or gets the 503', async () => {
    // Two Claude Code bodies of 12 MB held upstream: 24 of the 32 MB budget.
    const held = [post(12 * MB), post(12 * MB)];
    await eventually(() => upstream.held() === 2, 20_000, '2 bodies upstream');
    // A 4 MB chunked body fits (28 MB), its parse (8 MB more) does not.
    const pad = 'x'.repeat(4 * MB - 200);
    const text = JSON.stringify({ model: 'claude-sonnet-4-5-20250929', max_tokens: 8, messages: [{ role: 'user', content: pad }] });
    const res = await request(`${router.url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${router.clientKey}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: Readable.from([Buffer.from(text.slice(0, 1024)), Buffer.from(text.slice(1024))]),
    });
    const answer = JSON.parse(await res.body.text()) as { error: { type: string; message: string } };
    assert.equal(res.statusCode, 503);
    assert.equal(res.headers['retry-after'], '2');
    assert.equal(answer.error.type, 'overloaded_error');
    assert.equal(upstream.held(), 2, 'it never reached the upstream');
    upstream.release();
    assert.deepEqual(
      (await Promise.all(held)).map((r) => r.status),
      [200, 200],
    );
    // With the budget free again, the same chunked body is parsed and served.
    const again = await request(`${router.url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${router.clientKey}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: Readable.from([Buffer.from(text)]),
    });
    await again.body.dump();
    assert.equal(again.statusCode, 200);
  });
});
