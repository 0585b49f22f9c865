import { strict as assert } from 'node:assert';
import { inspect } from 'node:util';
import { parseDateString, parseResetMs, parseRetryAfterMs } from '../../src/quota/time';
import { parseDecimal } from '../../src/quota/number';

const NOW = Date.UTC(2025, 10, 4, 0, 0, 0); // 2025-11-04T00:00:00Z

describe('quota/time parseResetMs', () => {
  it('reads a numeric epoch-seconds string as seconds', () => {
    assert.equal(parseResetMs('1762232400'), 1762232400_000);
  });
  it('reads a number of epoch seconds as seconds', () => {
    assert.equal(parseResetMs(1762232400), 1762232400_000);
  });
  it('keeps fractional seconds to the millisecond', () => {
    assert.equal(parseResetMs('1762232400.5'), 1762232400_500);
  });
  it('treats values above ~4.1e9 as already milliseconds', () => {
    assert.equal(parseResetMs(1762232400_123), 1762232400_123);
    assert.equal(parseResetMs('1762232400123'), 1762232400_123);
  });
  it('treats the boundary 4.1e9 as seconds and just above as ms', () => {
    assert.equal(parseResetMs(4.1e9), 4.1e12);
    assert.equal(parseResetMs(4.1e9 + 1), 4.1e9 + 1);
  });
  it('trims whitespace around numbers', () => {
    assert.equal(parseResetMs('  1762232400 '), 1762232400_000);
  });
  it('parses ISO-8601 with microseconds and an offset', () => {
    assert.equal(parseResetMs('2025-11-04T04:59:59.943648+00:00'), Date.UTC(2025, 10, 4, 4, 59, 59, 943));
  });
  it('parses ISO-8601 with Z and with a non-UTC offset', () => {
    assert.equal(parseResetMs('2025-11-04T05:00:00Z'), Date.UTC(2025, 10, 4, 5));
    assert.equal(parseResetMs('2025-11-04T07:00:00+02:00'), Date.UTC(2025, 10, 4, 5));
    assert.equal(parseResetMs('2025-11-04T07:00:00+0200'), Date.UTC(2025, 10, 4, 5));
  });
  it('reads an ISO date-time without offset as UTC, not local time', () => {
    assert.equal(parseResetMs('2025-11-04T05:00:00'), Date.UTC(2025, 10, 4, 5));
    assert.equal(parseResetMs('2025-11-04 05:00:00'), Date.UTC(2025, 10, 4, 5));
  });
  it('parses an HTTP-date', () => {
    assert.equal(parseResetMs('Tue, 04 Nov 2025 05:00:00 GMT'), Date.UTC(2025, 10, 4, 5));
  });
  for (const garbage of [
    '',
    '   ',
    'NaN',
    'nan',
    'Infinity',
    '-Infinity',
    '-1',
    '-1762232400',
    '0',
    '0.0',
    'abc',
    'Error 1',
    '1 2',
    'May 5',
    '0x10',
    '1,5',
    'true',
    '{}',
    '[]',
    '1e400',
    '9'.repeat(400),
    '0001-01-01T00:00:00Z',
    '2025-13-45T99:99:99Z',
  ]) {
    it(`rejects garbage string ${JSON.stringify(garbage.slice(0, 30))}`, () => {
      assert.equal(parseResetMs(garbage), undefined);
    });
  }
  for (const [label, garbage] of [
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['-1', -1],
    ['0', 0],
    ['null', null],
    ['undefined', undefined],
    ['object', { a: 1 }],
    ['array', ['1762232400']],
    ['boolean', true],
    ['huge number', 1e300],
    ['bigint', 10n],
    ['beyond Date range', 8.64e15 + 1],
  ] as [string, unknown][]) {
    it(`rejects non-string garbage: ${label}`, () => {
      assert.equal(parseResetMs(garbage), undefined);
    });
  }
});

describe('quota/time parseDateString', () => {
  it('refuses strings V8 would happily misparse', () => {
    assert.equal(parseDateString('Error 1'), undefined);
    assert.equal(parseDateString('abc 12'), undefined);
    assert.equal(parseDateString('2020'), undefined);
  });
  it('accepts a date-only ISO string as UTC midnight', () => {
    assert.equal(parseDateString('2025-11-04'), NOW);
  });
});

describe('quota/time parseRetryAfterMs', () => {
  it('reads integer delta-seconds', () => {
    assert.equal(parseRetryAfterMs('30', NOW), 30_000);
  });
  it('reads fractional delta-seconds', () => {
    assert.equal(parseRetryAfterMs('0.5', NOW), 500);
    assert.equal(parseRetryAfterMs('1.0005', NOW), 1001);
  });
  it('clamps a negative delta to 0', () => {
    assert.equal(parseRetryAfterMs('-5', NOW), 0);
  });
  it('reads an HTTP-date relative to now', () => {
    assert.equal(parseRetryAfterMs('Tue, 04 Nov 2025 00:01:00 GMT', NOW), 60_000);
  });
  it('clamps a past HTTP-date to 0', () => {
    assert.equal(parseRetryAfterMs('Mon, 03 Nov 2025 23:00:00 GMT', NOW), 0);
  });
  for (const garbage of [undefined, '', '  ', 'soon', 'NaN', 'Infinity', '1e400', '0x1f', 'Error 1']) {
    it(`rejects ${JSON.stringify(garbage)}`, () => {
      assert.equal(parseRetryAfterMs(garbage, NOW), undefined);
    });
  }
  it('rejects a non-string at runtime', () => {
    assert.equal(parseRetryAfterMs(['30'] as unknown as string, NOW), undefined);
  });
});

describe('quota/number parseDecimal', () => {
  it('parses plain decimals and exponents', () => {
    assert.equal(parseDecimal('0.42'), 0.42);
    assert.equal(parseDecimal('.5'), 0.5);
    assert.equal(parseDecimal('4.'), 4);
    assert.equal(parseDecimal('1e-2'), 0.01);
    assert.equal(parseDecimal(' -3 '), -3);
    assert.equal(parseDecimal(7), 7);
  });
  it('rejects everything else', () => {
    for (const v of ['', '.', 'e5', '1.2.3', '0x10', 'Infinity', '1e999', '1 2', null, undefined, {}, [1], NaN, true]) {
      assert.equal(parseDecimal(v), undefined, inspect(v));
    }
  });
});
