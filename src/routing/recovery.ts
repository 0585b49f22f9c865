/**
 * When an unusable account becomes usable again: the latest end among everything that blocks
 * it (cooldown, 5h, 7d and unified windows, the requested model's scoped window, sign-in), and
 * the earliest such recovery across a pool. Pure: no I/O, the time is always an argument.
 */
import type { Cooldown, CooldownReason, QuotaSnapshot, QuotaWindow } from '../quota/types';
import { isTransientCooldown } from '../quota/cooldown';
import { isRejectionStatus } from '../quota/status';
import type { AccountMetrics } from './metrics';

/** One account's state as the recovery forecast needs it. */
export interface RecoveryInput {
  label: string;
  /** Metrics computed for the request at hand (its model family decides the scoped window). */
  metrics: AccountMetrics;
  cooldown: Cooldown | undefined;
  snapshot: QuotaSnapshot | undefined;
}

/** One thing that keeps an account from serving, and until when. */
interface Blocker {
  /** `5h window`, `7d window`, `model-scoped window`, `unified window`, `throttle`, `overloaded`, `needs sign-in`, … */
  what: string;
  /** Epoch ms at which it clears; Infinity when that is unknown (no reset known, or needs sign-in). */
  untilMs: number;
  /** Set when the blocker is an account cooldown. */
  cooldownReason?: CooldownReason;
}

/** When an account becomes usable again, and the blocker that clears last. */
export interface Recovery {
  label: string;
  /** Epoch ms; `now` when usable; Infinity when unknown (a blocker without a known end). */
  atMs: number;
  /** The blocker that clears last (`usable` when none); for an unknown recovery, the one without an end. */
  what: string;
  /** Set when that last blocker is a cooldown. */
  cooldownReason?: CooldownReason;
}

/** A ticking 5h or 7d window that rejects (by status or by utilisation), as computeMetrics reads it. */
function windowBlocks(w: QuotaWindow | undefined, now: number): w is QuotaWindow & { resetAtMs: number } {
  return !!w && w.resetAtMs !== undefined && w.resetAtMs > now && (isRejectionStatus(w.status) || (w.utilization ?? 0) >= 1);
}

/** The blocker a unified `rejected` verdict stands for, named after the window it claims. */
function unifiedBlocker(s: QuotaSnapshot, now: number): Blocker | undefined {
  if (s.unifiedStatus?.trim().toLowerCase() !== 'rejected') return undefined;
  const reset = s.unifiedResetAtMs;
  // Without a reset the verdict binds until fresher evidence replaces it (as in computeMetrics).
  if (reset === undefined || reset <= 0) return { what: 'unified window, no known reset', untilMs: Infinity };
  if (reset <= now) return undefined;
  const what = s.representativeClaim === 'five_hour' ? '5h window' : s.representativeClaim === 'seven_day' ? '7d window' : 'unified window';
  return { what, untilMs: reset };
}

/**
 * Everything that keeps `a` from serving at `now` (empty when it is usable). Windows count
 * only where its metrics count them (fresh evidence, no overage), so the list agrees with
 * `a.metrics.usable`; an unusable account with no blocker found yields one unknown blocker.
 */
function blockersOf(a: RecoveryInput, now: number): Blocker[] {
  const m = a.metrics;
  if (m.usable) return [];
  if (m.unusableReason === 'needs_sign_in') return [{ what: 'needs sign-in', untilMs: Infinity }];
  const out: Blocker[] = [];
  const s = a.snapshot;
  if (m.hardSaturated && s) {
    if (windowBlocks(s.session, now)) out.push({ what: '5h window', untilMs: s.session.resetAtMs });
    if (windowBlocks(s.weekly, now)) out.push({ what: '7d window', untilMs: s.weekly.resetAtMs });
    const unified = unifiedBlocker(s, now);
    if (unified) out.push(unified);
  }
  if (m.scopedRejected) out.push({ what: 'model-scoped window', untilMs: m.scopedResetMs });
  const c = a.cooldown;
  if (c && c.untilMs > now) {
    const what = c.windows?.length ? `${c.windows.join('+')} window` : c.reason.replace(/_/g, ' ');
    out.push({ what, untilMs: c.untilMs, cooldownReason: c.reason });
  }
  return out.length > 0 ? out : [{ what: 'unknown reset', untilMs: Infinity }];
}

/** When `a` is usable again: the latest end among its blockers (windows win ties over cooldowns). */
export function recoveryOf(a: RecoveryInput, now: number): Recovery {
  const blockers = blockersOf(a, now);
  if (blockers.length === 0) return { label: a.label, atMs: now, what: 'usable' };
  const last = blockers.reduce((x, y) => (y.untilMs > x.untilMs ? y : x));
  const recovery: Recovery = { label: a.label, atMs: last.untilMs, what: last.what };
  if (last.cooldownReason) recovery.cooldownReason = last.cooldownReason;
  return recovery;
}

/** Every account's recovery, earliest first (stable: ties keep the pool's order; unknown ones last). */
export function recoveriesByTime(accounts: readonly RecoveryInput[], now: number): Recovery[] {
  return accounts.map((a) => recoveryOf(a, now)).sort((x, y) => (x.atMs < y.atMs ? -1 : x.atMs > y.atMs ? 1 : 0));
}

/**
 * What a request may wait for while no account can serve it: the pool's soonest recovery, when
 * the last thing that account waits for is a transient cooldown (a throttle, an overload, server
 * errors) ending within `maxWaitMs` (ms) of `now` (epoch ms). Undefined when the soonest recovery
 * is a usage window (5h, 7d, account-wide, model-scoped), sign-in, a revoked token or unknown —
 * never waited on — or further away (docs/routing.md#transient-wait).
 */
export function waitableRecovery(accounts: readonly RecoveryInput[], now: number, maxWaitMs: number): Recovery | undefined {
  const first = recoveriesByTime(accounts, now)[0];
  if (!first || !isTransientCooldown(first.cooldownReason) || !(first.atMs - now <= maxWaitMs)) return undefined;
  return first;
}
