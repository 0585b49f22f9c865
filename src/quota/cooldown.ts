/**
 * Account-wide cooldowns: planning them from a response class, merging, clearing, querying.
 * Pure: the time is always an argument. Durations come from ./constants.ts; the kinds follow
 * docs/anthropic-api.md#kinds-of-429 and docs/anthropic-api.md#other-statuses.
 */
import {
  FORBIDDEN_COOLDOWN_MS,
  OVERLOADED_CEILING_MS,
  OVERLOADED_DEFAULT_MS,
  SERVER_ERROR_CEILING_MS,
  SERVER_ERROR_COOLDOWN_MS,
  THROTTLE_CEILING_MS,
  THROTTLE_FLOOR_MS,
  WINDOW_EXHAUSTED_CEILING_MS,
  WINDOW_EXHAUSTED_FALLBACK_MS,
} from './constants';
import { showsAllowed } from './status';
import type { Cooldown, CooldownReason, QuotaSnapshot, ResponseClass } from './types';

/** `ms` clamped to [floor, ceiling]; a non-finite `ms` reads as `fallback`. */
function clamp(ms: number | undefined, fallback: number, floor: number, ceiling: number): number {
  const v = ms !== undefined && Number.isFinite(ms) ? ms : fallback;
  return Math.min(ceiling, Math.max(floor, v));
}

/**
 * The cooldown a response class calls for, set at `nowMs` (epoch ms), or undefined for none.
 *
 * - `window_exhausted` → until `untilMs`, at most now + 8 days; an `untilMs` that is not in the
 *   future (or not finite) becomes now + 10 min; `windows` copied;
 * - `throttle` → `retryAfterMs` clamped to [2 s, 15 min];
 * - `overloaded` → `retryAfterMs` (default 5 s) clamped to [0, 60 s];
 * - `forbidden` → 10 min;
 * - `server_error` → 2 s, or its `retryAfterMs` clamped to [2 s, 60 s];
 * - `request_scoped`, `entitlement`, `model_scoped_exhausted`, `concurrency_throttle`,
 *   `unauthorized`, `client_error`, `success` → undefined (no account-wide cooldown; 401 is handled
 *   by a token refresh; a concurrency throttle lowers the account's learned concurrency limit
 *   instead, docs/routing.md#concurrency-limits).
 */
export function planCooldown(cls: ResponseClass, nowMs: number): Cooldown | undefined {
  const make = (reason: CooldownReason, durationMs: number): Cooldown => ({
    untilMs: nowMs + durationMs,
    reason,
    setAtMs: nowMs,
  });
  switch (cls.kind) {
    case 'window_exhausted': {
      const until = Number.isFinite(cls.untilMs) && cls.untilMs > nowMs ? cls.untilMs : nowMs + WINDOW_EXHAUSTED_FALLBACK_MS;
      return {
        untilMs: Math.min(until, nowMs + WINDOW_EXHAUSTED_CEILING_MS),
        reason: 'window_exhausted',
        windows: [...cls.windows],
        setAtMs: nowMs,
      };
    }
    case 'throttle':
      return make('throttle', clamp(cls.retryAfterMs, THROTTLE_FLOOR_MS, THROTTLE_FLOOR_MS, THROTTLE_CEILING_MS));
    case 'overloaded':
      return make('overloaded', clamp(cls.retryAfterMs, OVERLOADED_DEFAULT_MS, 0, OVERLOADED_CEILING_MS));
    case 'forbidden':
      return make('forbidden', FORBIDDEN_COOLDOWN_MS);
    case 'server_error':
      return make('server_error', clamp(cls.retryAfterMs, SERVER_ERROR_COOLDOWN_MS, SERVER_ERROR_COOLDOWN_MS, SERVER_ERROR_CEILING_MS));
    case 'request_scoped':
    case 'concurrency_throttle':
    case 'entitlement':
    case 'model_scoped_exhausted':
    case 'unauthorized':
    case 'client_error':
    case 'success':
      return undefined;
  }
}

/**
 * Combines an account's current cooldown with a new one. A cooldown never shortens: the result's
 * `untilMs` is the later of the two. When `next` ends strictly later it wins with its `reason`
 * and `windows`; otherwise `existing` keeps its reason and windows. `setAtMs` is the later of
 * the two (the latest time the account was seen failing), so evidence observed between the two
 * events cannot clear it. Inputs are not mutated.
 */
export function mergeCooldown(existing: Cooldown | undefined, next: Cooldown): Cooldown {
  if (!existing) return { ...next };
  const winner = next.untilMs > existing.untilMs ? next : existing;
  return { ...winner, setAtMs: Math.max(existing.setAtMs, next.setAtMs) };
}

/** Cooldown reasons that later live quota evidence may lift early. */
const CLEARABLE: ReadonlySet<CooldownReason> = new Set<CooldownReason>(['window_exhausted', 'throttle']);

/**
 * True when `snapshot` lifts `cooldown` early. All must hold:
 * - the reason is `window_exhausted` or `throttle` (never `forbidden`, `needs_sign_in`,
 *   `overloaded`, `server_error` — quota headers say nothing about those);
 * - the snapshot is live evidence: `source === 'headers'` (a response from this account), not the
 *   usage endpoint, which lags and is paced (docs/anthropic-api.md#usage-endpoint: prefer live header evidence);
 * - it was observed strictly after the cooldown was set (`observedAtMs > setAtMs`), so the very
 *   response that set the cooldown never clears it;
 * - it shows the account allowed: the unified status is allowed or absent, neither 5h nor 7d is a
 *   rejection, and at least one of unified/5h/7d carries an allowed status (an empty snapshot
 *   proves nothing).
 */
export function cooldownClearedBy(cooldown: Cooldown, snapshot: QuotaSnapshot): boolean {
  if (!CLEARABLE.has(cooldown.reason)) return false;
  if (snapshot.source !== 'headers') return false;
  if (!(snapshot.observedAtMs > cooldown.setAtMs)) return false;
  return showsAllowed(snapshot);
}

/** True while `cooldown` is active at `nowMs` (epoch ms): `nowMs < untilMs`. Undefined → false. */
export function isCoolingDown(cooldown: Cooldown | undefined, nowMs: number): boolean {
  return cooldown !== undefined && nowMs < cooldown.untilMs;
}
