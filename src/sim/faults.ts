/**
 * Fault validation and the per-account FIFO queue of one-shot faults.
 */
import type { SimFault } from './types';

/** Every fault kind the sim understands. */
export const FAULT_KINDS = [
  'exhaust',
  'exhaust_after_answer',
  'throttle',
  'throttle_window',
  'headerless_429',
  'entitlement_429',
  'overloaded_529',
  'overloaded_in_stream',
  'error_after_content',
  'truncate',
  'expire_token',
  'slow_first_byte',
  'server_error',
  'html_error',
  'forbidden',
  'bad_request',
  'echo_headers',
] as const;

/** Faults that set a lasting state at injection instead of being queued. */
export function isPersistentFault(f: SimFault): f is Extract<SimFault, { kind: 'exhaust' | 'throttle_window' | 'expire_token' }> {
  return f.kind === 'exhaust' || f.kind === 'throttle_window' || f.kind === 'expire_token';
}

function nonNegNumber(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new Error(`${what} must be a non-negative number`);
  return v;
}

/** Check an untrusted value (e.g. from the HTTP control API) and return it as a SimFault; throws with a reason. */
export function validateFault(x: unknown): SimFault {
  if (!x || typeof x !== 'object') throw new Error('fault must be an object');
  const f = x as Record<string, unknown>;
  switch (f.kind) {
    case 'exhaust':
      if (typeof f.window !== 'string' || f.window === '') throw new Error('exhaust.window must be a string');
      return { kind: 'exhaust', window: f.window, resetInMs: nonNegNumber(f.resetInMs, 'exhaust.resetInMs'), perWindowOnly: f.perWindowOnly === true };
    case 'exhaust_after_answer':
      if (typeof f.window !== 'string' || f.window === '') throw new Error('exhaust_after_answer.window must be a string');
      return { kind: 'exhaust_after_answer', window: f.window, resetInMs: nonNegNumber(f.resetInMs, 'exhaust_after_answer.resetInMs') };
    case 'throttle':
      return { kind: 'throttle', retryAfterS: nonNegNumber(f.retryAfterS, 'throttle.retryAfterS') };
    case 'throttle_window':
      return {
        kind: 'throttle_window',
        durationMs: nonNegNumber(f.durationMs, 'throttle_window.durationMs'),
        retryAfterS: f.retryAfterS === undefined ? undefined : nonNegNumber(f.retryAfterS, 'throttle_window.retryAfterS'),
      };
    case 'slow_first_byte':
      return { kind: 'slow_first_byte', delayMs: nonNegNumber(f.delayMs, 'slow_first_byte.delayMs') };
    case 'server_error':
      if (f.status !== 500 && f.status !== 502 && f.status !== 503 && f.status !== 504) throw new Error('server_error.status must be 500, 502, 503 or 504');
      return { kind: 'server_error', status: f.status };
    case 'truncate':
      return { kind: 'truncate', clean: f.clean === true };
    case 'html_error':
      if (typeof f.status !== 'number' || !Number.isInteger(f.status) || f.status < 400 || f.status > 599) throw new Error('html_error.status must be an HTTP error status');
      return { kind: 'html_error', status: f.status, bytes: nonNegNumber(f.bytes, 'html_error.bytes') };
    case 'echo_headers':
      if (f.status !== 200 && f.status !== 400 && f.status !== 401 && f.status !== 500) throw new Error('echo_headers.status must be 200, 400, 401 or 500');
      return { kind: 'echo_headers', status: f.status };
    case 'headerless_429':
    case 'entitlement_429':
    case 'overloaded_529':
    case 'overloaded_in_stream':
    case 'error_after_content':
    case 'expire_token':
    case 'forbidden':
    case 'bad_request':
      return { kind: f.kind };
    default:
      throw new Error(`unknown fault kind ${JSON.stringify(f.kind)}; expected one of ${FAULT_KINDS.join(', ')}`);
  }
}

/** FIFO of one-shot faults for one account. */
export class FaultQueue {
  private readonly items: SimFault[] = [];

  /** Append `count` copies (count >= 1, integer). */
  push(f: SimFault, count = 1): void {
    const n = Math.floor(count);
    if (!(n >= 1)) throw new Error('count must be >= 1');
    for (let i = 0; i < n; i++) this.items.push(f);
  }

  /** Take the next fault, if any. */
  shift(): SimFault | undefined {
    return this.items.shift();
  }

  clear(): void {
    this.items.length = 0;
  }

  /** Queued kinds, in order. */
  kinds(): string[] {
    return this.items.map((f) => f.kind);
  }
}
