import assert from 'node:assert/strict';
import type { FakeUpstream } from '../../src/sim';
import { ManualClock, call, closeAll, msgBody, oauthHeaders, parseSse, postMessage, twoAccounts, withSim } from './helpers';

const SYSTEM = [{ type: 'text', text: 'You are Claude Code. '.repeat(40), cache_control: { type: 'ephemeral' } }];
const turn1 = [{ role: 'user', content: 'first question' }];
const turn2 = [...turn1, { role: 'assistant', content: 'first answer' }, { role: 'user', content: 'second question, a bit longer' }];

const tok = (x: unknown): number => Math.ceil(Buffer.byteLength(JSON.stringify(x)) / 4);

describe('sim: prompt cache', () => {
  const opened: FakeUpstream[] = [];
  afterEach(() => closeAll(opened));

  it('same session on the same account reads the cache; on another account it writes', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts() });
    const first = (await postMessage(sim, 'tok-a', { session: 's1', system: SYSTEM, messages: turn1 })).json().usage;
    const p1 = tok({ system: SYSTEM, messages: turn1 });
    assert.equal(first.input_tokens, tok(turn1[0]));
    assert.equal(first.cache_read_input_tokens, 0);
    assert.equal(first.cache_creation_input_tokens, p1 - first.input_tokens);

    const second = (await postMessage(sim, 'tok-a', { session: 's1', system: SYSTEM, messages: turn2 })).json().usage;
    const p2 = tok({ system: SYSTEM, messages: turn2 });
    assert.equal(second.input_tokens, tok(turn2[2]));
    assert.equal(second.cache_read_input_tokens, p1, 'reads everything cached last turn');
    assert.equal(second.cache_creation_input_tokens, p2 - p1 - second.input_tokens);

    const moved = (await postMessage(sim, 'tok-b', { session: 's1', system: SYSTEM, messages: turn2 })).json().usage;
    assert.equal(moved.cache_read_input_tokens, 0);
    assert.equal(moved.cache_creation_input_tokens, p2 - moved.input_tokens);

    const other = (await postMessage(sim, 'tok-a', { session: 's2', system: SYSTEM, messages: turn2 })).json().usage;
    assert.equal(other.cache_read_input_tokens, 0, 'another session does not share the entry');

    assert.equal(sim.account('a').cacheReadTokens, p1);
    assert.equal(sim.account('b').cacheCreationTokens, moved.cache_creation_input_tokens);
    assert.deepEqual(sim.requests[1].usage, { ...second });
  });

  it('reports cache usage in message_start of a stream and takes the session from metadata.user_id', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts() });
    const metadata = { user_id: JSON.stringify({ device_id: 'ab'.repeat(32), account_uuid: '', session_id: 'm-sess' }) };
    const post = (messages: unknown[]) =>
      call(`${sim.url}/v1/messages`, { method: 'POST', headers: oauthHeaders('tok-a'), body: msgBody({ stream: true, system: SYSTEM, messages, metadata }) });
    await post(turn1);
    const ev = parseSse((await post(turn2)).text);
    const u = ev[0].data.message.usage;
    assert.equal(u.cache_read_input_tokens, tok({ system: SYSTEM, messages: turn1 }));
    assert.equal(u.output_tokens, 1);
    assert.equal(sim.requests[1].sessionId, 'm-sess');
  });

  it('entries expire promptCacheTtlMs after their last use (injected clock)', async () => {
    const clock = new ManualClock();
    const sim = await withSim(opened, { now: clock.now, promptCacheTtlMs: 60_000, accounts: twoAccounts() });
    await postMessage(sim, 'tok-a', { session: 's', system: SYSTEM, messages: turn1 });
    clock.advance(60_000);
    const warm = (await postMessage(sim, 'tok-a', { session: 's', system: SYSTEM, messages: turn2 })).json().usage;
    assert.ok(warm.cache_read_input_tokens > 0, 'still live at exactly the TTL');
    clock.advance(60_001);
    const cold = (await postMessage(sim, 'tok-a', { session: 's', system: SYSTEM, messages: turn2 })).json().usage;
    assert.equal(cold.cache_read_input_tokens, 0);
    assert.ok(cold.cache_creation_input_tokens > 0);
  });

  it('no session means no caching at all', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts() });
    for (let i = 0; i < 2; i++) {
      const u = (await postMessage(sim, 'tok-a', { system: SYSTEM, messages: turn2 })).json().usage;
      assert.equal(u.cache_read_input_tokens, 0);
      assert.equal(u.cache_creation_input_tokens, 0);
      assert.equal(u.input_tokens, tok({ system: SYSTEM, messages: turn2 }));
    }
  });

  it('cache reads fill windows at a tenth of their size', async () => {
    const sim = await withSim(opened, { accounts: twoAccounts({ fiveHourLimitTokens: 1_000_000 }) });
    const u1 = (await postMessage(sim, 'tok-a', { session: 's', system: SYSTEM, messages: turn1 })).json().usage;
    const used1 = sim.account('a').fiveHourUsed * 1_000_000;
    assert.ok(Math.abs(used1 - (u1.input_tokens + u1.cache_creation_input_tokens + u1.output_tokens)) < 1e-6);
    const u2 = (await postMessage(sim, 'tok-a', { session: 's', system: SYSTEM, messages: turn2 })).json().usage;
    const used2 = sim.account('a').fiveHourUsed * 1_000_000 - used1;
    assert.ok(Math.abs(used2 - (u2.input_tokens + u2.cache_creation_input_tokens + u2.output_tokens + 0.1 * u2.cache_read_input_tokens)) < 1e-6);
  });
});
