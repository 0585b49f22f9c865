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
  USAGE_EVIDENCE_LAG_MS,
  WINDOW_EXHAUSTED_CEILING_MS,
  WINDOW_EXHAUSTED_FALLBACK_MS,
} from './constants';
import { isRejectionStatus, normalizeStatus, showsAllowed } from './status';
import type { Cooldown, CooldownReason, QuotaSnapshot, QuotaWindow, ResponseClass } from './types';

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
 * - `throttle` → `retryAfterMs` clamped to [0, 15 min] (the upstream's word, however short); 2 s
 *   when it is not a finite number;
 * - `overloaded` → `retryAfterMs` (default 5 s) clamped to [0, 60 s];
 * - `forbidden` → 10 min;
 * - `server_error` → its `retryAfterMs` clamped to [0, 60 s], 2 s without one;
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
      return make('throttle', clamp(cls.retryAfterMs, THROTTLE_FLOOR_MS, 0, THROTTLE_CEILING_MS));
    case 'overloaded':
      return make('overloaded', clamp(cls.retryAfterMs, OVERLOADED_DEFAULT_MS, 0, OVERLOADED_CEILING_MS));
    case 'forbidden':
      return make('forbidden', FORBIDDEN_COOLDOWN_MS);
    case 'server_error':
      return make('server_error', clamp(cls.retryAfterMs, SERVER_ERROR_COOLDOWN_MS, 0, SERVER_ERROR_CEILING_MS));
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
 * True when `snapshot` — the account's evidence once a new reading, whose request was sent at
 * `sentAtMs` (epoch ms; default the snapshot's observation time), is merged in — lifts `cooldown` early. The reading must have been sent
 * strictly after the cooldown was set (a request already in flight proves nothing). Then:
 * - header evidence (`source === 'headers'`, a response of this account): the reason is
 *   `window_exhausted` or `throttle` (never `forbidden`, `needs_sign_in`, `overloaded`,
 *   `server_error` — quota headers say nothing about those); it was observed strictly after the
 *   cooldown was set (the very response that set it never clears it); and it shows the account
 *   allowed: the unified status allowed or absent, neither 5h nor 7d a rejection, and at least one
 *   of unified/5h/7d allowed (an empty snapshot proves nothing);
 * - usage-endpoint evidence (`source === 'usage'`, which lags the limiter:
 *   docs/anthropic-api.md#usage-endpoint): only a `window_exhausted` cooldown (a transient or auth
 *   cooldown is never lifted by quota evidence), only when the reading was sent at least
 *   {@link USAGE_EVIDENCE_LAG_MS} (5 min) after the cooldown was set, and only when every window
 *   the cooldown is about (`5h`, `7d`; `unified` or none: both) reads `allowed` — below 80 %, the
 *   status the endpoint implies (src/quota/usage.ts) — or has reset.
 */
export function cooldownClearedBy(cooldown: Cooldown, snapshot: QuotaSnapshot, sentAtMs = snapshot.observedAtMs): boolean {
  if (!(sentAtMs > cooldown.setAtMs)) return false;
  if (snapshot.source === 'usage') {
    if (cooldown.reason !== 'window_exhausted' || sentAtMs < cooldown.setAtMs + USAGE_EVIDENCE_LAG_MS) return false;
    return cooledWindows(cooldown, snapshot).every((w) => w !== undefined && (renewed(w, snapshot.observedAtMs) || normalizeStatus(w.status) === 'allowed'));
  }
  if (!CLEARABLE.has(cooldown.reason)) return false;
  if (snapshot.source !== 'headers') return false;
  if (!(snapshot.observedAtMs > cooldown.setAtMs)) return false;
  return showsAllowed(snapshot);
}

/** Cooldowns that only pause an account for seconds (a throttle, Anthropic's overload, server errors): never a usage window, sign-in or a revoked token. */
const TRANSIENT: ReadonlySet<CooldownReason> = new Set<CooldownReason>(['throttle', 'overloaded', 'server_error']);

/** True for a transient cooldown reason (`throttle`, `overloaded`, `server_error`): the kinds a request may wait out (docs/routing.md#waiting). */
export function isTransientCooldown(reason: string | undefined): boolean {
  return reason !== undefined && TRANSIENT.has(reason as CooldownReason);
}

/**
 * True when the evidence suggests — without proving — that a `window_exhausted` cooldown still
 * running at `nowMs` (epoch ms) is over, so one real request may re-check it
 * (src/routing/probe.ts): every window the cooldown is about (`5h`, `7d`; `unified` or none: both)
 * either has a known reset that has passed, or was observed after the cooldown was set and is
 * below its limit (a status that is no rejection, under 100 %). A lagging usage reading or an
 * answer that was already in flight can make this wrong; the probe finds out. Other reasons: false.
 */
export function recoverySuggested(cooldown: Cooldown, snapshot: QuotaSnapshot | undefined, nowMs: number): boolean {
  if (cooldown.reason !== 'window_exhausted' || !isCoolingDown(cooldown, nowMs) || !snapshot) return false;
  return cooledWindows(cooldown, snapshot).every(
    (w) => w !== undefined && (renewed(w, nowMs) || ((w.observedAtMs ?? snapshot.observedAtMs) > cooldown.setAtMs && !isRejectionStatus(w.status) && (w.utilization ?? 0) < 1)),
  );
}

/** The snapshot's windows a `window_exhausted` cooldown is about: `5h` the session window, `7d` the weekly one, `unified` (or none named) both. */
function cooledWindows(cooldown: Cooldown, snapshot: QuotaSnapshot): (QuotaWindow | undefined)[] {
  const named = cooldown.windows?.filter((w) => w === '5h' || w === '7d') ?? [];
  const all = named.length === 0 || cooldown.windows!.includes('unified');
  return [...(all || named.includes('5h') ? [snapshot.session] : []), ...(all || named.includes('7d') ? [snapshot.weekly] : [])];
}

/** A window whose known reset lies at or before `atMs` (epoch ms): it has started afresh. */
function renewed(w: QuotaWindow, atMs: number): boolean {
  return w.resetAtMs !== undefined && w.resetAtMs > 0 && w.resetAtMs <= atMs;
}

/** True while `cooldown` is active at `nowMs` (epoch ms): `nowMs < untilMs`. Undefined → false. */
export function isCoolingDown(cooldown: Cooldown | undefined, nowMs: number): boolean {
  return cooldown !== undefined && nowMs < cooldown.untilMs;
}
