/**
 * Deterministic identifiers (no randomness anywhere in the sim).
 */
import { createHash } from 'node:crypto';

/** A UUID-shaped string derived from `seed` (stable across runs). */
export function simUuid(seed: string): string {
  const h = createHash('sha256').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Hex SHA-256 of a buffer. */
export function sha256Hex(buf: Buffer): string {
  return createHash('sha256').update(buf).digest('hex');
}

/** `label` made safe for token strings and header values. */
export function tokenSafe(label: string): string {
  return label.replace(/[^A-Za-z0-9_.-]/g, '_');
}

/** Sequential ids with a prefix: `msg_sim_000001`, … */
export class IdSequence {
  private n = 0;
  constructor(private readonly prefix: string) {}
  next(): string {
    this.n += 1;
    return `${this.prefix}${String(this.n).padStart(6, '0')}`;
  }
}
