import { strict as assert } from 'node:assert';
import { formatDuration } from '../../src/quota/duration';

describe('durations people read', () => {
  it('uses seconds, minutes, hours and, from two days on, days', () => {
    assert.equal(formatDuration(42), '42 s');
    assert.equal(formatDuration(300), '5 min');
    assert.equal(formatDuration(3725), '1 h 2 min');
    assert.equal(formatDuration(5 * 3600), '5 h');
    assert.equal(formatDuration(47 * 3600), '47 h');
    assert.equal(formatDuration(3 * 86400), '3 d');
  });

  it('reads days with their hours, truncated, never rounded up (issue 17: "2 d" must not read "3 d" at 2 d 12 h)', () => {
    assert.equal(formatDuration(48 * 3600 + 30), '2 d');
    assert.equal(formatDuration(48 * 3600 - 30), '47 h 59 min');
    assert.equal(formatDuration(60 * 3600), '2 d 12 h');
    assert.equal(formatDuration(3 * 86400 - 1), '2 d 23 h');
    assert.equal(formatDuration(59.9), '59 s');
    assert.equal(formatDuration(3599), '59 min');
    assert.equal(formatDuration(-5), '0 s');
    assert.equal(formatDuration(Infinity), '-');
  });

  it('never shows more than is left and only steps down as a countdown runs (every minute over 10 days)', () => {
    const UNIT: Record<string, number> = { s: 1, min: 60, h: 3600, d: 86400 };
    const shown = (text: string) => text.split(' ').reduce((sum, part, i, parts) => (i % 2 === 0 ? sum + Number(part) * UNIT[parts[i + 1]] : sum), 0);
    let previous = Infinity;
    for (let left = 10 * 86400; left >= 0; left -= 59) {
      const value = shown(formatDuration(left));
      assert.ok(value <= left, `${left} s reads ${formatDuration(left)}`);
      assert.ok(value <= previous, `${left} s reads ${formatDuration(left)}, more than a moment before`);
      previous = value;
    }
  });
});
