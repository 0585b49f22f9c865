import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { usageFromEvent, usageFromJson } from '../../../src/proxy/relay/answerUsage';

const count = fc.oneof(fc.nat(), fc.constant(0));
const usageArb = fc.record(
  {
    input_tokens: count,
    output_tokens: count,
    cache_creation_input_tokens: count,
    cache_read_input_tokens: count,
    cache_creation: fc.record({ ephemeral_5m_input_tokens: count, ephemeral_1h_input_tokens: count }),
    server_tool_use: fc.record({ web_search_requests: count }),
    service_tier: fc.constantFrom('standard', 'priority', 'odd {"usage":{} } text'),
  },
  { requiredKeys: [] },
);
/** Strings a model or a user may put in an event: quotes, braces, the word usage. */
const trickyText = fc.oneof(fc.string(), fc.constantFrom('"usage":{"output_tokens":999}', '}{', '{"usage":', 'usage'));

describe('usage read from answers', () => {
  it('an event read through its usage member alone gives the same usage as parsing the whole event', () => {
    fc.assert(
      fc.property(fc.boolean(), usageArb, trickyText, fc.boolean(), fc.option(usageArb), (start, usage, text, trailing, prevUsage) => {
        const data = start
          ? JSON.stringify({ type: 'message_start', message: { id: 'msg_1', model: text, content: [], stop_sequence: text, usage, ...(trailing ? { container: null } : {}) } })
          : JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'stop_sequence', stop_sequence: text }, usage });
        const event = start ? 'message_start' : 'message_delta';
        const prev = prevUsage ? usageFromEvent('message_delta', JSON.stringify({ usage: prevUsage }), null) : null;
        // Reference: the whole event parsed; a count the event lacks keeps the previous one.
        const whole = JSON.parse(data) as { message?: { usage: Record<string, number> }; usage?: Record<string, number> };
        const u = (start ? whole.message?.usage : whole.usage)!;
        const pick = (key: string, before: number | undefined) => (key in u ? u[key] : (before ?? 0));
        assert.deepEqual(usageFromEvent(event, data, prev), {
          inputTokens: pick('input_tokens', prev?.inputTokens),
          outputTokens: pick('output_tokens', prev?.outputTokens),
          cacheCreationInputTokens: pick('cache_creation_input_tokens', prev?.cacheCreationInputTokens),
          cacheReadInputTokens: pick('cache_read_input_tokens', prev?.cacheReadInputTokens),
        });
      }),
      { numRuns: 500, seed: 5 },
    );
  });

  it('keeps the previous usage when the event has none, and reads nothing from garbage', () => {
    const prev = { inputTokens: 1, outputTokens: 2, cacheCreationInputTokens: 3, cacheReadInputTokens: 4 };
    assert.deepEqual(usageFromEvent('message_delta', '{"type":"message_delta","delta":{}}', prev), prev);
    assert.deepEqual(usageFromEvent('message_delta', 'not json "usage":{', prev), prev);
    assert.equal(usageFromEvent('message_start', '{"usage":', null), null);
  });

  it('a JSON answer gives the usage of its top-level member, whatever its content holds and wherever the member is', () => {
    fc.assert(
      fc.property(usageArb, trickyText, fc.boolean(), fc.boolean(), fc.constantFrom('', ' ', '\n', ' \r\n\t'), (usage, text, nested, trailing, space) => {
        // A tool's input may hold a `usage` key of its own; a member may follow the top-level usage.
        const content = [{ type: 'text', text }, ...(nested ? [{ type: 'tool_use', id: 't', name: 'n', input: { usage: { output_tokens: 999 } } }] : [])];
        const answer = { id: 'msg_1', type: 'message', content, stop_reason: 'end_turn', usage, ...(trailing ? { container: null } : {}) };
        const body = Buffer.from(`${space}${JSON.stringify(answer, null, space === '' ? undefined : 1)}${space}`);
        const u = usage as Record<string, number>;
        const pick = (key: string) => (typeof u[key] === 'number' ? u[key] : 0);
        assert.deepEqual(usageFromJson(body), {
          inputTokens: pick('input_tokens'),
          outputTokens: pick('output_tokens'),
          cacheCreationInputTokens: pick('cache_creation_input_tokens'),
          cacheReadInputTokens: pick('cache_read_input_tokens'),
        });
      }),
      { numRuns: 500, seed: 7 },
    );
  });

  it('a JSON answer without top-level usage has none, even when its content holds a usage key; a body that is not JSON has no answer', () => {
    assert.equal(usageFromJson(Buffer.from('{"type":"message","content":[{"type":"tool_use","input":{"usage":{"output_tokens":9}}}]}')), null);
    assert.equal(usageFromJson(Buffer.from('{"type":"message","x":{"usage":{"output_tokens":9}}}')), null);
    assert.equal(usageFromJson(Buffer.from('{"type":"message","usage":null}')), null);
    for (const body of ['<html><body>{"usage":{"output_tokens":1}}</body></html>', '{"type":"message","usage":{"output_tokens":1}', '"usage":{"output_tokens":1}}', 'ok', ''])
      assert.equal(usageFromJson(Buffer.from(body)), undefined, body);
  });
});
