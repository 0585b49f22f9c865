/**
 * Strict decimal parsing shared by the header and usage parsers.
 * Pure: no I/O, no clock.
 */

/** A plain decimal number: optional sign, digits with optional fraction, optional exponent. No hex, no `Infinity`. */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * Reads a finite number from a JS number or a decimal string (surrounding whitespace allowed).
 * Returns undefined for anything else: empty or blank strings, `NaN`, `Infinity`, hex, `1,5`,
 * booleans, objects, arrays, and numbers that overflow to ±Infinity. Units are the caller's business.
 */
export function parseDecimal(value: unknown): number | undefined {
  let n: number;
  if (typeof value === 'number') {
    n = value;
  } else if (typeof value === 'string') {
    const s = value.trim();
    if (!DECIMAL.test(s)) return undefined;
    n = Number(s);
  } else {
    return undefined;
  }
  return Number.isFinite(n) ? n : undefined;
}

/** True when `value` looks like a plain decimal number string (see {@link parseDecimal}). */
export function isDecimalString(value: string): boolean {
  return DECIMAL.test(value.trim());
}
