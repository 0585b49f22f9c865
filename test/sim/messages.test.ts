import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { FakeUpstream } from '../../src/sim';
import { BETA, ManualClock, U, call, closeAll, msgBody, oauthHeaders, parseSse, postMessage, twoAccounts, withSim } from './helpers';

describe('sim: /v1/messages', () => {
  const opened: FakeUpstream[] = [];
  afterEach(() => closeAll(opened));

  it('answers JSON with the standard message object, exact usage and unified headers', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts() });
    const r = await postMessage(sim, 'tok-a');
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'], /^application\/json/);
    const m = r.json();
    assert.match(m.id, /^msg_sim_/);
    assert.equal(m.type, 'message');
    assert.equal(m.role, 'assistant');
    assert.equal(m.model, 'claude-sonnet-4-5-20250929');
    assert.deepEqual(m.content, [{ type: 'text', text: 'Hello from a.' }]);
    assert.equal(m.stop_reason, 'end_turn');
    assert.equal(m.stop_sequence, null);
    assert.deepEqual(Object.keys(m.usage).sort(), ['cache_creation_input_tokens', 'cache_read_input_tokens', 'input_tokens', 'output_tokens']);
    // No session: everything is plain input; prompt tokens = ceil(bytes({system,tools,messages})/4).
    const prompt = Math.ceil(Buffer.byteLength(JSON.stringify({ messages: [{ role: 'user', content: 'say hi' }] })) / 4);
    assert.deepEqual(m.usage, { input_tokens: prompt, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: Math.ceil('Hello from a.'.length / 4) });
    assert.match(r.headers['request-id'], /^req_sim_/);
    assert.ok(r.headers['anthropic-organization-id']);
    for (const k of ['status', 'reset', 'representative-claim', '5h-status', '5h-utilization', '5h-reset', '7d-status', '7d-utilization', '7d-reset']) {
      assert.ok(r.headers[U + k] !== undefined, `missing ${U + k}`);
    }
    assert.equal(r.headers[U + 'overage-status'], 'rejected');
    assert.equal(r.headers[U + 'overage-disabled-reason'], 'org_level_disabled');
    assert.equal(sim.account('a').served, 1);
    assert.equal(sim.account('b').served, 0);
  });

  it('streams the real event sequence with exact framing, deltas concatenating to the reply', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts(), replyText: (l) => `Streamed reply for ${l}, long enough.` });
    const r = await postMessage(sim, 'tok-b', { stream: true, session: 'sess-1' });
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'], /^text\/event-stream/);
    assert.ok(r.headers[U + '5h-utilization'] !== undefined, 'streamed 200 carries unified headers');
    const ev = parseSse(r.text);
    assert.deepEqual(
      ev.map((e) => e.event),
      ['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'],
    );
    for (const e of ev) assert.equal(e.data.type, e.event);
    const msg = ev[0].data.message;
    assert.match(msg.id, /^msg_sim_/);
    assert.deepEqual([msg.type, msg.role, msg.stop_reason, msg.content.length], ['message', 'assistant', null, 0]);
    assert.equal(msg.usage.output_tokens, 1);
    assert.ok(msg.usage.input_tokens >= 1);
    assert.ok(msg.usage.cache_creation_input_tokens > 0, 'first turn of a session is a cache write');
    assert.equal(msg.usage.cache_read_input_tokens, 0);
    assert.deepEqual(ev[1].data, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    const text = ev
      .filter((e) => e.event === 'content_block_delta')
      .map((e) => e.data.delta.text)
      .join('');
    assert.equal(text, 'Streamed reply for b, long enough.');
    assert.ok(ev.filter((e) => e.event === 'content_block_delta').every((e) => e.data.delta.type === 'text_delta' && e.data.delta.text.length > 0));
    assert.deepEqual(ev[7].data.delta, { stop_reason: 'end_turn', stop_sequence: null });
    assert.equal(ev[7].data.usage.output_tokens, Math.ceil(text.length / 4));
  });

  it('honours sseDeltaCount and paces events sseIntervalMs apart (first event arrives early)', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts(), sseDeltaCount: 25, sseIntervalMs: 15, replyText: () => 'x'.repeat(100) });
    const { request } = await import('undici');
    const t0 = Date.now();
    const res = await request(`${sim.url}/v1/messages`, { method: 'POST', headers: oauthHeaders('tok-a'), body: msgBody({ stream: true }) });
    let firstAt = 0;
    let all = '';
    for await (const c of res.body) {
      if (!firstAt) firstAt = Date.now() - t0;
      all += (c as Buffer).toString();
    }
    const total = Date.now() - t0;
    const ev = parseSse(all);
    assert.equal(ev.filter((e) => e.event === 'content_block_delta').length, 25);
    assert.equal(ev.length, 31);
    assert.ok(total >= 30 * 15 - 20, `paced stream took ${total} ms`);
    assert.ok(firstAt < total / 2, `first chunk at ${firstAt} ms of ${total} ms`);
  });

  it('records every request with headers as received, path with query, body hash and session', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts() });
    const body = msgBody({ metadata: { user_id: JSON.stringify({ device_id: 'd'.repeat(64), account_uuid: '', session_id: 'meta-sess' }) } });
    await call(`${sim.url}/v1/messages?beta=true`, { method: 'POST', headers: oauthHeaders('tok-a'), body });
    await call(`${sim.url}/_sim/state`, {});
    assert.equal(sim.requests.length, 1, 'control requests are not recorded');
    const rec = sim.requests[0];
    assert.equal(rec.method, 'POST');
    assert.equal(rec.path, '/v1/messages?beta=true');
    assert.equal(rec.account, 'a');
    assert.equal(rec.status, 200);
    assert.equal(rec.headers.authorization, 'Bearer tok-a');
    assert.equal(rec.bodyBytes, Buffer.byteLength(body));
    assert.equal(rec.bodySha256, createHash('sha256').update(body).digest('hex'));
    assert.equal(rec.sessionId, 'meta-sess');
    assert.equal(rec.fault, undefined);
  });

  it('rejects an OAuth token without the oauth beta, unknown and api-key-as-bearer tokens', async () => {
    const sim = await withSim(opened, { accounts: [...twoAccounts(), { label: 'k', accessToken: 'sk-ant-api03-key', apiKey: true }] });
    const noBeta = await call(`${sim.url}/v1/messages`, { method: 'POST', headers: { ...oauthHeaders('tok-a'), 'anthropic-beta': 'claude-code-20250219' }, body: msgBody() });
    assert.equal(noBeta.status, 401);
    assert.deepEqual(noBeta.json(), { type: 'error', error: { type: 'authentication_error', message: 'OAuth authentication is currently not supported.' } });
    const unknown = await postMessage(sim, 'tok-zzz');
    assert.equal(unknown.status, 401);
    assert.equal(unknown.json().error.message, 'Invalid bearer token');
    const keyAsBearer = await postMessage(sim, 'sk-ant-api03-key');
    assert.equal(keyAsBearer.status, 401);
    const none = await call(`${sim.url}/v1/messages`, { method: 'POST', headers: { 'anthropic-version': '2023-06-01' }, body: msgBody() });
    assert.equal(none.status, 401);
    assert.equal(sim.account('a').served, 0);
  });

  it('serves an apiKey account via x-api-key without unified headers or the oauth beta', async () => {
    const sim = await withSim(opened, { accounts: [{ label: 'k', accessToken: 'sk-ant-api03-key', apiKey: true }, ...twoAccounts()] });
    const r = await call(`${sim.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': 'sk-ant-api03-key', 'anthropic-version': '2023-06-01' }, body: msgBody() });
    assert.equal(r.status, 200);
    assert.deepEqual(
      Object.keys(r.headers).filter((k) => k.startsWith('anthropic-ratelimit')),
      [],
    );
    assert.equal(sim.requests[0].account, 'k');
    // An OAuth token in x-api-key is not an API key.
    const wrong = await call(`${sim.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': 'tok-a', 'anthropic-version': '2023-06-01' }, body: msgBody() });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.json().error.message, 'invalid x-api-key');
  });

  it('answers 400 invalid_request_error for bad JSON, missing model or messages, missing anthropic-version', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts() });
    const post = (body: string, headers = oauthHeaders('tok-a')) => call(`${sim.url}/v1/messages`, { method: 'POST', headers, body });
    const cases: Array<[string, Record<string, string> | undefined, RegExp]> = [
      ['{not json', undefined, /JSON/],
      [JSON.stringify({ messages: [] }), undefined, /^model:/],
      [JSON.stringify({ model: 'claude-sonnet-4-5' }), undefined, /^messages:/],
      [msgBody(), { authorization: 'Bearer tok-a', 'anthropic-beta': BETA }, /anthropic-version/],
    ];
    for (const [body, headers, msg] of cases) {
      const r = await post(body, headers);
      assert.equal(r.status, 400, body);
      assert.equal(r.json().type, 'error');
      assert.equal(r.json().error.type, 'invalid_request_error');
      assert.match(r.json().error.message, msg);
    }
    assert.equal(sim.account('a').served, 0);
  });

  it('count_tokens returns prompt tokens without filling windows; models lists models; 404 elsewhere', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts() });
    const body = msgBody({ system: 'You are terse.' });
    const ct = await call(`${sim.url}/v1/messages/count_tokens?beta=true`, { method: 'POST', headers: oauthHeaders('tok-a'), body });
    assert.equal(ct.status, 200);
    const parsed = JSON.parse(body);
    const expected = Math.ceil(Buffer.byteLength(JSON.stringify({ system: parsed.system, messages: parsed.messages })) / 4);
    assert.deepEqual(ct.json(), { input_tokens: expected });
    assert.equal(sim.account('a').served, 0);
    assert.equal(sim.account('a').fiveHourUsed, 0);
    const ctNoBeta = await call(`${sim.url}/v1/messages/count_tokens`, { method: 'POST', headers: { ...oauthHeaders('tok-a'), 'anthropic-beta': '' }, body });
    assert.equal(ctNoBeta.status, 401);

    const models = await call(`${sim.url}/v1/models`, { headers: oauthHeaders('tok-a') });
    assert.equal(models.status, 200);
    const list = models.json();
    assert.ok(list.data.some((m: any) => m.id === 'claude-sonnet-4-5-20250929' && m.display_name === 'Claude Sonnet 4.5' && m.type === 'model'));
    assert.equal(list.has_more, false);
    assert.equal(list.first_id, list.data[0].id);
    assert.equal(list.last_id, list.data[list.data.length - 1].id);

    const nf = await call(`${sim.url}/v1/nope`, { headers: oauthHeaders('tok-a') });
    assert.equal(nf.status, 404);
    assert.equal(nf.json().error.type, 'not_found_error');
  });

  it('uses the injected clock for window resets in headers (epoch seconds)', async () => {
    const clock = new ManualClock();
    const sim = await withSim(opened, { accounts: twoAccounts(), now: clock.now });
    const r = await postMessage(sim, 'tok-a');
    assert.equal(r.headers[U + '5h-reset'], String(Math.ceil((clock.t + 18_000_000) / 1000)));
    assert.equal(r.headers[U + '7d-reset'], String(Math.ceil((clock.t + 604_800_000) / 1000)));
    assert.equal(sim.requests[0].at, clock.t);
  });
});
