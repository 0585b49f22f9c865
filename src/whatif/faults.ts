/**
 * Transient failures in a decision log, and the cooldown each one sets when the simulator
 * replays it: the router's own cooldown rules (src/quota/cooldown.ts, docs/routing.md#cooldowns)
 * with the length the log showed. Pure.
 */
import { DEFAULT_THROTTLE_MS } from '../quota/constants';
import { planCooldown } from '../quota/cooldown';
import type { Cooldown, ResponseClass } from '../quota/types';
import type { FaultKind } from './workload';

const KINDS: ReadonlySet<string> = new Set<FaultKind>(['throttle', 'overloaded', 'server_error', 'forbidden']);

/** The fault an attempt's recorded `result` stands for (`throttle`, `stream_overloaded`, …), or undefined for any other result. */
export function faultKindOf(result: string): FaultKind | undefined {
  const kind = result.startsWith('stream_') ? result.slice('stream_'.length) : result;
  return KINDS.has(kind) ? (kind as FaultKind) : undefined;
}

/** The response class of a fault whose cooldown lasted `cooldownMs` (undefined: not known). */
function responseClass(kind: FaultKind, cooldownMs: number | undefined): ResponseClass {
  switch (kind) {
    case 'throttle':
      return { kind, retryAfterMs: cooldownMs ?? DEFAULT_THROTTLE_MS };
    case 'overloaded':
    case 'server_error':
      return { kind, retryAfterMs: cooldownMs };
    case 'forbidden':
      return { kind };
  }
}

/**
 * The cooldown a replayed fault sets at `atMs` (epoch ms): the router's rule for its kind, with the
 * recorded length `cooldownMs` as its retry-after (clamped as the router clamps it).
 */
export function faultCooldown(kind: FaultKind, cooldownMs: number | undefined, atMs: number): Cooldown {
  return planCooldown(responseClass(kind, cooldownMs), atMs)!;
}

/** How long a fault of `kind` cools an account when the log does not show it, ms. */
export function defaultCooldownMs(kind: FaultKind): number {
  const c = faultCooldown(kind, undefined, 0);
  return c.untilMs - c.setAtMs;
}
