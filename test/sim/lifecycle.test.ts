import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { FakeUpstream } from '../../src/sim';
import { call, closeAll, msgBody, oauthHeaders, postMessage, twoAccounts, withSim } from './helpers';

function rawPost(sim: FakeUpstream, agent: http.Agent, body: string, onResponse?: (res: http.IncomingMessage) => void): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(`${sim.url}/v1/messages`);
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers: oauthHeaders('tok-a') }, (res) => {
      onResponse?.(res);
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
      res.on('aborted', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('sim: lifecycle and control API', () => {
  const opened: FakeUpstream[] = [];
  afterEach(() => closeAll(opened));

  it('close() returns promptly with an idle keep-alive connection open', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts() });
    const agent = new http.Agent({ keepAlive: true, keepAliveMsecs: 60_000 });
    const r = await rawPost(sim, agent, msgBody());
    assert.equal(r.status, 200);
    assert.equal(Object.values(agent.freeSockets).flat().length, 1, 'a keep-alive socket is idle in the pool');
    const t0 = Date.now();
    await sim.close();
    assert.ok(Date.now() - t0 < 500, `close took ${Date.now() - t0} ms`);
    agent.destroy();
  });

  it('close() returns promptly in the middle of a slow stream and a slow first byte', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts(), sseIntervalMs: 5_000 });
    const agent = new http.Agent({ keepAlive: true });
    let gotHeaders!: () => void;
    const headers = new Promise<void>((r) => (gotHeaders = r));
    const streaming = rawPost(sim, agent, msgBody({ stream: true }), () => gotHeaders()).catch(() => ({ status: -1, text: '' }));
    await headers;
    sim.injectFault('b', { kind: 'slow_first_byte', delayMs: 10_000 });
    const slow = call(`${sim.url}/v1/messages`, { method: 'POST', headers: oauthHeaders('tok-b'), body: msgBody() }).catch((e: Error) => e);
    await new Promise((r) => setTimeout(r, 50));
    const t0 = Date.now();
    await sim.close();
    assert.ok(Date.now() - t0 < 500, `close took ${Date.now() - t0} ms`);
    const s = await streaming;
    assert.ok(!s.text.includes('message_stop'));
    assert.ok((await slow) instanceof Error, 'the delayed request fails rather than hanging');
    agent.destroy();
  });

  it('survives a client aborting mid-stream and keeps serving', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts(), sseIntervalMs: 20, sseDeltaCount: 10 });
    const u = new URL(`${sim.url}/v1/messages`);
    await new Promise<void>((resolve) => {
      const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: oauthHeaders('tok-a') }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => undefined);
      req.end(msgBody({ stream: true }));
    });
    await new Promise((r) => setTimeout(r, 300));
    const r = await postMessage(sim, 'tok-a');
    assert.equal(r.status, 200);
    assert.equal(sim.requests.length, 2);
  });

  it('HTTP control API: fault, state without tokens, clear, advance; control calls are not recorded', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts() });
    const post = (p: string, b: unknown) => call(`${sim.url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) });
    const f = await post('/_sim/fault', { label: 'a', fault: { kind: 'throttle', retryAfterS: 3 }, count: 2 });
    assert.equal(f.status, 200);
    assert.deepEqual(f.json().pendingFaults, ['throttle', 'throttle']);
    assert.equal((await post('/_sim/fault', { label: 'a', fault: { kind: 'bogus' } })).status, 400);
    assert.equal((await post('/_sim/fault', { label: 'zz', fault: { kind: 'forbidden' } })).status, 400);
    const first = await postMessage(sim, 'tok-a');
    assert.equal(first.status, 429);
    assert.equal(first.headers['retry-after'], '3');

    const state = await call(`${sim.url}/_sim/state`, {});
    assert.equal(state.status, 200);
    assert.ok(!state.text.includes('tok-a') && !state.text.includes('ref-a'), 'no tokens in state');
    const a = state.json().accounts.find((x: any) => x.label === 'a');
    assert.deepEqual(a.pendingFaults, ['throttle']);
    assert.equal(a.served, 0);
    assert.equal(typeof a.fiveHourUsed, 'number');

    assert.equal((await post('/_sim/clear', { label: 'a' })).status, 200);
    assert.equal((await postMessage(sim, 'tok-a')).status, 200);

    await post('/_sim/fault', { label: 'b', fault: { kind: 'exhaust', window: '5h', resetInMs: 60_000 } });
    assert.equal((await postMessage(sim, 'tok-b')).status, 429);
    const adv = await post('/_sim/advance', { ms: 60_000 });
    assert.equal(adv.status, 200);
    assert.equal((await postMessage(sim, 'tok-b')).status, 200);
    assert.ok(sim.requests.every((r) => !r.path.startsWith('/_sim/')));
    assert.equal(sim.requests.length, 4);
  });

  it('maxRecords bounds the request log, keeping the newest', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts(), maxRecords: 10 });
    for (let i = 0; i < 25; i++) await postMessage(sim, 'tok-a', { session: `s${i}` });
    assert.ok(sim.requests.length >= 10 && sim.requests.length <= 11, String(sim.requests.length));
    assert.equal(sim.requests[sim.requests.length - 1].sessionId, 's24');
    assert.equal(sim.account('a').served, 25);
  });

  it('exhaust is refused for an apiKey account', async () => {
    const sim = await withSim(opened, { accounts: [{ label: 'k', accessToken: 'sk-ant-api03-k', apiKey: true }] });
    assert.throws(() => sim.injectFault('k', { kind: 'exhaust', window: '5h', resetInMs: 1000 }), /apiKey/);
  });

  it('main.ts starts a sim with N accounts and prints its URL and tokens', async function () {
    this.timeout(10_000);
    const entry = path.resolve(__dirname, '../../src/sim/main.js');
    const child = spawn(process.execPath, [entry, '--accounts', '2', '--deltas', '5'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      const first = (await lines.next()).value as string;
      const m = /^sim listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(first);
      assert.ok(m, first);
      const info = JSON.parse((await lines.next()).value as string);
      assert.equal(info.url, m[1]);
      assert.equal(info.accounts.length, 2);
      const r = await call(`${info.url}/v1/messages`, { method: 'POST', headers: oauthHeaders(info.accounts[1].accessToken), body: msgBody({ stream: true }) });
      assert.equal(r.status, 200);
      assert.equal((r.text.match(/event: content_block_delta/g) ?? []).length, 5);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
