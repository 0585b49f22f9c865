import { strict as assert } from 'node:assert';
import { formatDuration } from '../../../src/proxy/pipeline/noUsableAccount';

describe('durations people read', () => {
  it('uses seconds, minutes, hours and, from two days on, days', () => {
    assert.equal(formatDuration(42), '42 s');
    assert.equal(formatDuration(300), '5 min');
    assert.equal(formatDuration(3725), '1 h 2 min');
    assert.equal(formatDuration(5 * 3600), '5 h');
    assert.equal(formatDuration(47 * 3600), '47 h');
    assert.equal(formatDuration(3 * 86400), '3 d');
  });
});
