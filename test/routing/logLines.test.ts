import { strict as assert } from 'node:assert';
import { logLines, type LogLine } from '../../src/routing/logLines';

/** The chunks as an async iterable, as a file stream gives them. */
async function* chunksOf(...chunks: (string | Buffer)[]): AsyncGenerator<Buffer> {
  for (const c of chunks) yield typeof c === 'string' ? Buffer.from(c) : c;
}

async function lines(chunks: AsyncIterable<Buffer>, cap?: number): Promise<LogLine[]> {
  const out: LogLine[] = [];
  for await (const l of logLines(chunks, cap)) out.push(l);
  return out;
}

describe('routing/logLines: a log split into capped lines', () => {
  it('splits across chunk boundaries (a character of several bytes too), numbers every line, drops \\r\\n, keeps a last line without a line end', async () => {
    const euro = Buffer.from('€'); // 3 bytes, split between chunks
    const got = await lines(chunksOf('{"a":1}\n{"b"', ':2}\r\n\n', Buffer.concat([Buffer.from('x'), euro.subarray(0, 1)]), euro.subarray(1), '\nlast'));
    assert.deepEqual(
      got.map((l) => [l.n, l.text]),
      [
        [1, '{"a":1}'],
        [2, '{"b":2}'],
        [3, ''],
        [4, 'x€'],
        [5, 'last'],
      ],
    );
  });

  it('gives a line longer than the cap as null text with its length, and goes on with the lines after it', async () => {
    const big = 'y'.repeat(40);
    const got = await lines(chunksOf('short\n', big.slice(0, 15), big.slice(15, 30), big.slice(30) + '\nafter\n', big), 20);
    assert.deepEqual(got, [
      { n: 1, text: 'short', bytes: 5 },
      { n: 2, text: null, bytes: 40 },
      { n: 3, text: 'after', bytes: 5 },
      { n: 4, text: null, bytes: 40 },
    ]);
  });

  it('reads a line of 40 MB in 1 MB chunks without holding it: what it keeps stays near the cap', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    const before = process.memoryUsage().arrayBuffers;
    let peak = 0;
    async function* huge(): AsyncGenerator<Buffer> {
      yield Buffer.from('{"first":1}\n');
      for (let i = 0; i < 40; i++) {
        peak = Math.max(peak, process.memoryUsage().arrayBuffers - before);
        yield chunk;
      }
      yield Buffer.from('\n{"last":1}\n');
    }
    const got = await lines(huge());
    assert.deepEqual(
      got.map((l) => [l.n, l.text, l.bytes]),
      [
        [1, '{"first":1}', 11],
        [2, null, 40 * 1024 * 1024],
        [3, '{"last":1}', 10],
      ],
    );
    assert.ok(peak < 8 * 1024 * 1024, `${peak} bytes held`);
  });
});
