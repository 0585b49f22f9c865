import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { RecentLines } from '../../src/proxy/recentLines';

function last(recent: RecentLines, limit: number): string[] {
  const { from, to } = recent.lastSeqs(limit);
  const out: string[] = [];
  for (let seq = from; seq < to; seq++) out.push(recent.text(seq));
  return out;
}

describe('RecentLines (the in-memory tail of the decision log)', () => {
  it('always returns the newest lines, whole and in order, however lengths and wrap-arounds fall', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'grapheme', maxLength: 60 }), { maxLength: 200 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 64, max: 600 }),
        (lines, capacity, limit, ringBytes) => {
          const recent = new RecentLines(capacity, ringBytes);
          for (const line of lines) {
            const b = Buffer.from(line);
            recent.push(b, 0, b.length);
          }
          const got = last(recent, limit);
          const fitting = lines.filter((l) => Buffer.byteLength(l) <= ringBytes);
          // Whatever is returned is exactly the newest lines, oldest first.
          assert.deepEqual(got, lines.slice(lines.length - got.length));
          // And no fewer than fit without doubt: the newest lines totalling at most half the ring.
          let sure = 0;
          for (let i = lines.length - 1, bytes = 0; i >= 0; i--) {
            bytes += Buffer.byteLength(lines[i]);
            if (bytes > ringBytes / 2) break;
            sure++;
          }
          if (fitting.length === lines.length) assert.ok(got.length >= Math.min(limit, capacity, sure), `${got.length} < ${Math.min(limit, capacity, sure)}`);
          assert.ok(got.length <= Math.min(limit, capacity));
        },
      ),
      { numRuns: 1000, seed: 11 },
    );
  });

  it('a line larger than the ring empties it rather than keeping older lines in its place', () => {
    const recent = new RecentLines(10, 100);
    for (const l of ['a', 'b', 'x'.repeat(200)]) recent.push(Buffer.from(l), 0, l.length);
    assert.deepEqual(last(recent, 10), []);
    recent.push(Buffer.from('c'), 0, 1);
    assert.deepEqual(last(recent, 10), ['c']);
  });
});
