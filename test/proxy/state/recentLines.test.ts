import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { RecentLines } from '../../../src/proxy/state/recentLines';

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
        fc.integer({ min: 1, max: 600 }),
        (lines, capacity, limit, ringBytes, initialBytes) => {
          const recent = new RecentLines(capacity, ringBytes, initialBytes);
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
          assert.ok(recent.ringBytes <= ringBytes);
        },
      ),
      { numRuns: 1000, seed: 11 },
    );
  });

  it('takes the memory its kept lines need, not its bound', () => {
    // The decision log's ring: 500 lines, at most 4 MiB. Lines of 2.6 KB (a record over three
    // accounts) need 1.3 MB; a ring that wrapped at its bound would touch all 4 MiB.
    const recent = new RecentLines(500, 4 * 1024 * 1024);
    assert.equal(recent.ringBytes, 64 * 1024);
    const line = (i: number) => Buffer.from(`${String(i).padStart(8, '0')}${'x'.repeat(2592)}`);
    for (let i = 0; i < 5000; i++) recent.push(line(i), 0, 2600);
    assert.equal(recent.ringBytes, 2 * 1024 * 1024);
    const kept = last(recent, 500);
    assert.equal(kept.length, 500);
    assert.equal(kept[0].slice(0, 8), '00004500');
    assert.equal(kept[499].slice(0, 8), '00004999');
    // Lines that need the whole bound still get it.
    for (let i = 0; i < 600; i++) recent.push(Buffer.alloc(20_000, 'y'), 0, 20_000);
    assert.equal(recent.ringBytes, 4 * 1024 * 1024);
    assert.equal(last(recent, 500).length, Math.floor((4 * 1024 * 1024) / 20_000));
  });

  it('growing to its bound keeps the newest lines that fit beside the new one', () => {
    // The grow that reaches the bound must not pack the kept lines where the next wrap overwrites them all.
    const recent = new RecentLines(4, 593, 142);
    for (const n of [147, 294, 18, 106, 44, 205, 270]) recent.push(Buffer.alloc(n, 0x61 + (n % 26)), 0, n);
    assert.deepEqual(
      last(recent, 4).map((l) => l.length),
      [44, 205, 270],
    );
  });

  it('a line larger than the ring empties it rather than keeping older lines in its place', () => {
    const recent = new RecentLines(10, 100, 10);
    for (const l of ['a', 'b', 'x'.repeat(200)]) recent.push(Buffer.from(l), 0, l.length);
    assert.deepEqual(last(recent, 10), []);
    recent.push(Buffer.from('c'), 0, 1);
    assert.deepEqual(last(recent, 10), ['c']);
  });
});
