import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { eventData, forEachEvent, SseEventTooLargeError, SseFramer, SseScanner } from '../../../src/proxy/relay/sse';

/** A plain string reading of the SSE grammar (the WHATWG event-stream rules the router relies on), as the oracle. */
function stringScan(text: string): string[][] {
  const events: string[][] = [];
  for (const block of text.split(/\r?\n\r?\n/).slice(0, -1)) {
    let event = 'message';
    const data: string[] = [];
    let any = false;
    for (const line of block.split(/\r?\n/)) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else continue;
      any = true;
    }
    if (any) events.push([event, data.join('\n')]);
  }
  return events;
}

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
  const expected = stringScan(text);
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

  it('gives the same events as objects to readers off the hot path (SseScanner)', () => {
    const stream = 'event: changed\r\ndata: {}\r\n\r\n: ping\n\nevent: changed\ndata: a\ndata: b\n\nevent: half';
    const scanner = new SseScanner();
    const seen = chunked(Buffer.from(stream), [3, 17, 1, 9]).flatMap((c) => scanner.feed(c).map((e) => [e.event, e.data]));
    assert.deepEqual(seen, stringScan(stream));
  });
});
