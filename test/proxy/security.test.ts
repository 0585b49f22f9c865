import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { accounts, callRouter, messagesBody, routerStatus, startHarness, type Harness } from '../support/routerHarness';

/** A raw request so the test controls Host and Origin exactly. */
function raw(h: Harness, opts: { method?: string; path?: string; headers?: Record<string, string>; body?: string }) {
  const url = new URL(h.router.url);
  return new Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method: opts.method ?? 'GET', path: opts.path ?? '/', headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

describe('proxy security', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness(accounts('a', 'b'));
  });
  afterEach(() => h.close());

  it('refuses requests without the local key, with an Anthropic-shaped 401', async () => {
    const r = await callRouter(h, { key: null });
    assert.equal(r.status, 401);
    assert.equal(JSON.parse(r.text).error.type, 'authentication_error');
    const wrong = await callRouter(h, { key: 'not-the-key' });
    assert.equal(wrong.status, 401);
    const status = await raw(h, { path: '/status' });
    assert.equal(status.status, 401);
    assert.equal(h.sim.requests.length, 0, 'nothing reached upstream');
  });

  it('accepts the key in any of its three headers', async () => {
    for (const headers of <Record<string, string>[]>[
      { 'x-claude-router-key': h.router.clientKey },
      { authorization: `Bearer ${h.router.clientKey}` },
      { 'x-api-key': h.router.clientKey },
    ]) {
      const r = await callRouter(h, { key: null, headers, session: 's' });
      assert.equal(r.status, 200, JSON.stringify(Object.keys(headers)));
    }
  });

  it('refuses a foreign Host header (DNS rebinding) and any browser Origin, even with the key', async () => {
    const key = { 'x-claude-router-key': h.router.clientKey };
    const foreign = await raw(h, { path: '/status', headers: { ...key, host: 'evil.example:80' } });
    assert.equal(foreign.status, 403);
    const browser = await raw(h, { path: '/status', headers: { ...key, origin: 'https://evil.example' } });
    assert.equal(browser.status, 403);
    assert.equal(JSON.parse(browser.body).error.type, 'permission_error');
  });

  it('answers /health and HEAD /api/hello without the key, revealing only liveness', async () => {
    const health = await raw(h, { path: '/health' });
    assert.equal(health.status, 200);
    assert.deepEqual(JSON.parse(health.body), { status: 'ok' });
    const hello = await raw(h, { method: 'HEAD', path: '/api/hello' });
    assert.equal(hello.status, 200);
  });

  it('refuses a body over 32 MB locally with request_too_large', async () => {
    const big = 'x'.repeat(33 * 1024 * 1024);
    const r = await raw(h, {
      method: 'POST',
      path: '/v1/messages',
      headers: { 'x-claude-router-key': h.router.clientKey, 'content-type': 'application/json' },
      body: big,
    }).catch((e) => ({ status: -1, body: String(e), headers: {} }));
    assert.equal(r.status, 413);
    assert.equal(JSON.parse(r.body).error.type, 'request_too_large');
    assert.equal(h.sim.requests.length, 0);
  });

  it('lets a client still sending an over-limit body read the 413 (fetch-style client, declared and chunked)', async () => {
    const big = Buffer.alloc(33 * 1024 * 1024, 0x78);
    const headers = { 'x-claude-router-key': h.router.clientKey, 'content-type': 'application/json' };
    // fetch, as the Anthropic SDK sends: it reports a reset, not the answer, if the server closes while it still sends.
    const declared = await fetch(`${h.router.url}/v1/messages`, { method: 'POST', headers, body: big });
    assert.equal(declared.status, 413);
    assert.equal(((await declared.json()) as { error: { type: string } }).error.type, 'request_too_large');
    const chunked = await request(`${h.router.url}/v1/messages`, { method: 'POST', headers, body: Readable.from([big.subarray(0, 20 << 20), big.subarray(20 << 20)]) });
    assert.equal(chunked.statusCode, 413);
    await chunked.body.dump();
    assert.equal(h.sim.requests.length, 0);
  });

  it('answers malformed JSON without a session header with a local 400 invalid_request_error', async () => {
    const r = await callRouter(h, { body: '{"model": "x", ' });
    assert.equal(r.status, 400);
    assert.equal(JSON.parse(r.text).error.type, 'invalid_request_error');
  });

  it('answers unknown paths with not_found_error', async () => {
    const r = await callRouter(h, { path: '/v1/complete' });
    assert.equal(r.status, 404);
    assert.equal(JSON.parse(r.text).error.type, 'not_found_error');
  });

  it('never shows a token in /status, the decision log or response headers', async () => {
    const r = await callRouter(h, { session: 's1', body: messagesBody({ stream: true }) });
    await callRouter(h, { session: 's1' });
    const status = JSON.stringify(await routerStatus(h));
    await h.router.close();
    const log = JSON.stringify(h.decisions());
    for (const label of ['a', 'b']) {
      const acct = h.sim.account(label);
      for (const secret of [acct.accessToken, acct.refreshToken!, `sk-ant-oat01-test-${label}`, `sk-ant-ort01-test-${label}`]) {
        assert.ok(!status.includes(secret), 'status leaks a token');
        assert.ok(!log.includes(secret), 'decision log leaks a token');
        assert.ok(!JSON.stringify(r.headers).includes(secret), 'response headers leak a token');
      }
    }
    assert.ok(!status.includes(h.router.clientKey), 'status leaks the client key');
  });
});
