import assert from 'node:assert/strict';
import fc from 'fast-check';
import { modelFamily, windowStatus } from '../../src/sim';
import { canonicalWindowName } from '../../src/sim/windows';
import { sessionIdOf } from '../../src/sim/session';
import { frameEvent, splitText } from '../../src/sim/sse';
import { PromptCache } from '../../src/sim/promptCache';

describe('sim: pure pieces', () => {
  it('splitText always concatenates back and splits evenly', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 80 }), fc.integer({ min: 1, max: 40 }), (text, n) => {
        const parts = splitText(text, n);
        assert.equal(parts.length, n);
        assert.equal(parts.join(''), text);
        const sizes = parts.map((p) => Array.from(p).length);
        assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 1);
      }),
    );
  });

  it('frames events as event/data lines with a blank line', () => {
    assert.equal(frameEvent({ event: 'ping', data: { type: 'ping' } }), 'event: ping\ndata: {"type":"ping"}\n\n');
  });

  it('window status thresholds are fractions: 0.8 warns, 1 rejects', () => {
    assert.deepEqual([0, 0.79, 0.8, 0.99, 1, 1.2].map(windowStatus), ['allowed', 'allowed', 'allowed_warning', 'allowed_warning', 'rejected', 'rejected']);
    assert.deepEqual(['5h', 'five_hour', '7d', 'seven_day', '7d_opus', 'seven_day_sonnet', 'monthly'].map(canonicalWindowName), [
      '5h',
      '5h',
      '7d',
      '7d',
      '7d_opus',
      '7d_sonnet',
      null,
    ]);
  });

  it('model family comes from a substring of the model id', () => {
    assert.equal(modelFamily('claude-opus-4-5-20251101'), 'opus');
    assert.equal(modelFamily('claude-3-5-haiku-latest'), 'haiku');
    assert.equal(modelFamily('claude-sonnet-4-5'), 'sonnet');
    assert.equal(modelFamily('some-model'), null);
    assert.equal(modelFamily('claude-oi-1', ['oi']), 'oi');
  });

  it('session id: header, then metadata.user_id JSON, then legacy string', () => {
    const legacy = { metadata: { user_id: `user_${'a'.repeat(64)}_account__session_123e4567-e89b-12d3-a456-426614174000` } };
    assert.equal(sessionIdOf({ 'x-claude-code-session-id': 'h' }, legacy), 'h');
    assert.equal(sessionIdOf({}, { metadata: { user_id: JSON.stringify({ device_id: 'x', account_uuid: '', session_id: 'j' }) } }), 'j');
    assert.equal(sessionIdOf({}, legacy), '123e4567-e89b-12d3-a456-426614174000');
    assert.equal(sessionIdOf({}, { metadata: { user_id: 'plain' } }), null);
    assert.equal(sessionIdOf({}, null), null);
  });

  it('prompt cache plan never goes negative and sums to the prompt', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 0, max: 400_000 })), { maxLength: 20 }), (turns) => {
        const c = new PromptCache(300_000);
        let t = 0;
        for (const [prompt, tail, dt] of turns) {
          t += dt;
          const u = c.plan('s', prompt, tail, t);
          assert.ok(u.input_tokens >= 1 && u.cache_creation_input_tokens >= 0 && u.cache_read_input_tokens >= 0);
          assert.equal(u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens, prompt);
          c.commit('s', prompt, t);
        }
      }),
    );
  });
});
