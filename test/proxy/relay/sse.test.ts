import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { eventData, forEachEvent, SseEventTooLargeError, SseFramer, SseScanner } from '../../../src/proxy/relay/sse';

const eventArb = fc.record({
  event: fc.constantFrom('message_start', 'content_block_delta', 'ping', 'message_stop', 'error', 'ünïcode'),
  data: fc.oneof(fc.json(), fc.constant('{"type":"ping"}')).map((d) => d.replace(/[\r\n]/g, ' ')),
  crlf: fc.boolean(),
});

/** Any block of lines the SSE grammar allows: several data lines, comments, ids, no name, look-alike fields. */
const lineArb = fc.oneof(
  eventArb.map((e) => `event: ${e.event}`),
  eventArb.map((e) => `event:${e.event}`),
  fc.constant('event'),
  eventArb.map((e) => `data: ${e.data}`),
  eventArb.map((e) => `data:${e.data}`),
  fc.constant('data'),
  fc.constant(': keep-alive comment'),
  fc.constant('id: 7'),
  fc.constant('eventful: not a name'),
  fc.constant('datum: not data'),
);
const blockArb = fc.record({ lines: fc.array(lineArb, { minLength: 1, maxLength: 4 }), crlf: fc.boolean() });

function chunked(bytes: Buffer, cuts: number[]): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  for (const n of [...cuts, bytes.length]) {
    if (at >= bytes.length) break;
    const chunk = bytes.subarray(at, Math.min(bytes.length, at + n));
    at += chunk.length;
    out.push(chunk);
  }
  return out;
}

function scanAll(chunks: Buffer[]): { seen: string[][]; framer: SseFramer } {
  const framer = new SseFramer();
  const seen: string[][] = [];
  for (const chunk of chunks) {
    const complete = framer.push(chunk);
    if (complete) forEachEvent(complete, (event, buf, start, end) => seen.push([event, eventData(buf, start, end)]) > 0);
  }
  return { seen, framer };
}

/** The bytes of `text`, cut into reads of the given sizes, give the string scanner's events, and nothing is left held. */
function assertScansLikeStringScanner(text: string, cuts: number[], label?: string): void {
  const bytes = Buffer.from(text, 'utf8');
  const expected = new SseScanner().feed(bytes).map((e) => [e.event, e.data]);
  const { seen, framer } = scanAll(chunked(bytes, cuts));
  assert.deepEqual(seen, expected, label);
  assert.equal(framer.hasPartial(), false, label);
}

describe('SSE framing and scanning', () => {
  it('refuses to hold an unfinished event past its limit, and counts afresh after each finished one', () => {
    const framer = new SseFramer(100);
    // Finished events release what was held: 90 bytes at a time never reach the limit.
    for (let i = 0; i < 5; i++) {
      assert.equal(framer.push(Buffer.from(`data: ${'x'.repeat(80)}`)), undefined);
      assert.ok(framer.push(Buffer.from('\n\n')));
    }
    framer.push(Buffer.from(`data: ${'x'.repeat(60)}`));
    assert.throws(() => framer.push(Buffer.from('y'.repeat(60))), SseEventTooLargeError);
  });

  it('the byte-level scanner reads the same events as the string scanner, however the bytes are chunked', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 12 }), fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 30 }), (events, cuts) => {
        const text = events.map((e) => (e.crlf ? `event: ${e.event}\r\ndata: ${e.data}\r\n\r\n` : `event: ${e.event}\ndata: ${e.data}\n\n`)).join('');
        assertScansLikeStringScanner(text, cuts);
      }),
      { numRuns: 300, seed: 42 },
    );
  });

  it('agrees with the string scanner on any field mix (comments, ids, several data lines, unnamed events, look-alike fields)', () => {
    fc.assert(
      fc.property(fc.array(blockArb, { maxLength: 8 }), fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 30 }), (blocks, cuts) => {
        const text = blocks.map((b) => (b.crlf ? `${b.lines.join('\r\n')}\r\n\r\n` : `${b.lines.join('\n')}\n\n`)).join('');
        assertScansLikeStringScanner(text, cuts);
      }),
      { numRuns: 400, seed: 7 },
    );
  });

  it('finds every blank line however finely the bytes are cut (CRLF split over three or four reads)', () => {
    const stream = [
      'event: message_start\r\ndata: {"type":"message_start"}\r\n\r\n',
      ': comment\n\n',
      'event: content_block_delta\ndata: {"t":"ü"}\n\r\n',
      'event: message_stop\r\ndata: {}\r\n\r\n',
    ].join('');
    for (const size of [1, 2, 3, 4, 5]) {
      const cuts = Array.from({ length: Math.ceil(Buffer.byteLength(stream) / size) }, () => size);
      assertScansLikeStringScanner(stream, cuts, `${size}-byte reads`);
    }
  });
});
