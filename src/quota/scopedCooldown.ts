/**
 * Model-scoped cooldowns: a 429 that rejected only one model family's weekly window
 * (docs/anthropic-api.md#kinds-of-429, kind 2) keeps the account out for that family until the
 * window's reset — remembered like an account-wide cooldown, not only as a snapshot window that
 * ages out after 15 minutes. Pure: the time is always an argument. Rules: docs/routing.md#cooldowns.
 */
import { USAGE_EVIDENCE_LAG_MS, WINDOW_EXHAUSTED_CEILING_MS } from './constants';
import { namesModelFamily } from './family';
import { isAllowedStatus, normalizeStatus } from './status';
import type { Cooldown, QuotaSnapshot, ResponseClass } from './types';

/**
 * The scoped cooldown a response class calls for, set at `nowMs` (epoch ms): for a
 * `model_scoped_exhausted` answer with a reset in the future, that family's cooldown until the
 * reset (at most now + 8 days), reason `window_exhausted`, window `7d_<family>` (`7d_<window>` when
 * the window names no model family, such as `7d_oi`). Undefined for
 * every other class, and for a scoped rejection without a known future reset (its snapshot window
 * keeps the account out for that family while it is fresh, as before).
 */
export function planScopedCooldown(cls: ResponseClass, nowMs: number): { family: string; cooldown: Cooldown } | undefined {
  if (cls.kind !== 'model_scoped_exhausted' || cls.untilMs === undefined || !(cls.untilMs > nowMs)) return undefined;
  return {
    family: cls.family,
    cooldown: { untilMs: Math.min(cls.untilMs, nowMs + WINDOW_EXHAUSTED_CEILING_MS), reason: 'window_exhausted', windows: [`7d_${cls.window ?? cls.family}`], setAtMs: nowMs },
  };
}

/**
 * True when `snapshot` (the account's evidence once a reading whose request was sent at
 * `sentAtMs`, epoch ms, is merged in) lifts the scoped cooldown of `family`: the reading was sent
 * after the cooldown was set and its window for `family` has reset or reads allowed — from an
 * answer's headers any allowed status; from the usage endpoint, which lags, only `allowed` (below
 * 80 %) and only when sent at least 5 min ({@link USAGE_EVIDENCE_LAG_MS}) after the cooldown was set.
 */
export function scopedCooldownClearedBy(cooldown: Cooldown, family: string, snapshot: QuotaSnapshot, sentAtMs: number): boolean {
  if (!(sentAtMs > cooldown.setAtMs)) return false;
  // The window that set it: `7d_oi` for a window named by no model family, else the family's own.
  const named = /^7d_(.+)$/.exec(cooldown.windows?.[0] ?? '')?.[1];
  const key = named !== undefined && !namesModelFamily(named) ? named : family;
  const w = Object.hasOwn(snapshot.scoped, key) ? snapshot.scoped[key] : undefined;
  if (!w || !(w.observedAtMs > cooldown.setAtMs)) return false;
  if (w.resetAtMs !== undefined && w.resetAtMs > 0 && w.resetAtMs <= w.observedAtMs) return true;
  if (snapshot.source === 'usage') return sentAtMs >= cooldown.setAtMs + USAGE_EVIDENCE_LAG_MS && normalizeStatus(w.status) === 'allowed';
  return isAllowedStatus(w.status);
}
