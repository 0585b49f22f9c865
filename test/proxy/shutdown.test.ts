/**
 * A router that closes while an answer is still streaming: after the grace time the client gets
 * one Anthropic-shaped `event: error` it can retry after the last whole event, not a cut
 * connection, and the decision says the stream ended with an error, not that the client left.
 */
import { strict as assert } from 'node:assert';
import { request } from 'undici';
import { accounts, callRouter, messagesBody, startHarness, type Harness } from '../support/routerHarness';

describe('closing the router while answers stream', function () {
  this.timeout(30_000);
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('a stream still running at the end of the grace time ends with one overloaded_error event, recorded as error_after_commit', async () => {
    // 200 events 50 ms apart: about 10 s, far past the 2 s grace time.
    h = await startHarness(accounts('a'), { sim: { sseDeltaCount: 200, sseIntervalMs: 50 } });
    const res = await request(`${h.router.url}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', authorization: `Bearer ${h.router.clientKey}`, 'x-claude-code-session-id': 'long' },
      body: messagesBody({ stream: true }),
    });
    assert.equal(res.statusCode, 200);
    let text = '';
    const reading = (async () => {
      for await (const chunk of res.body) text += (chunk as Buffer).toString('utf8');
    })();
    while (!text.includes('content_block_delta')) await new Promise((r) => setTimeout(r, 20));
    await h.router.close();
    await reading; // ends cleanly: no socket error
    assert.doesNotMatch(text, /event: message_stop/);
    const events = text.trimEnd().split('\n\n');
    assert.match(events.at(-1)!, /^event: error\ndata: \{"type":"error","error":\{"type":"overloaded_error","message":"Claude Router is shutting down; retry the request\."\}/);
    assert.equal(events.filter((e) => e.startsWith('event: error')).length, 1);
    for (const e of events) assert.match(e, /^event: \w+\ndata: \{.*\}$/s, 'only whole events');

    const d = h.decisions().at(-1)!;
    assert.equal(d.outcome, 'error_after_commit');
    assert.deepEqual(
      d.attempts.map((a) => a.result),
      ['shutdown'],
    );
  });

  it('an answer that ends within the grace time is served whole', async () => {
    h = await startHarness(accounts('a'), { sim: { sseDeltaCount: 10, sseIntervalMs: 50 } });
    const pending = callRouter(h, { session: 'short', body: messagesBody({ stream: true }) });
    await new Promise((r) => setTimeout(r, 100));
    await h.router.close();
    const r = await pending;
    assert.equal(r.status, 200);
    assert.match(r.text, /event: message_stop/);
    assert.doesNotMatch(r.text, /event: error/);
  });
});
