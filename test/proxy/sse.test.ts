import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { scanCompleteEvents, SseFramer, SseScanner } from '../../src/proxy/sse';

const eventArb = fc.record({
  event: fc.constantFrom('message_start', 'content_block_delta', 'ping', 'message_stop', 'error', 'ünïcode'),
  data: fc.oneof(fc.json(), fc.constant('{"type":"ping"}')).map((d) => d.replace(/[\r\n]/g, ' ')),
  crlf: fc.boolean(),
});

describe('SSE framing and scanning', () => {
  it('the byte-level scanner reads the same events as the string scanner, however the bytes are chunked', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 12 }), fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 30 }), (events, cuts) => {
        const text = events.map((e) => (e.crlf ? `event: ${e.event}\r\ndata: ${e.data}\r\n\r\n` : `event: ${e.event}\ndata: ${e.data}\n\n`)).join('');
        const bytes = Buffer.from(text, 'utf8');
        const expected = new SseScanner().feed(bytes).map((e) => [e.event, e.data]);
        const framer = new SseFramer();
        const seen: string[][] = [];
        let at = 0;
        for (const n of [...cuts, bytes.length]) {
          const chunk = bytes.subarray(at, Math.min(bytes.length, at + n));
          at += chunk.length;
          const complete = framer.push(chunk);
          if (complete) for (const e of scanCompleteEvents(complete)) seen.push([e.event, e.data()]);
          if (at >= bytes.length) break;
        }
        assert.deepEqual(seen, expected);
        assert.equal(framer.hasPartial(), false);
      }),
      { numRuns: 300, seed: 42 },
    );
  });
});
