/**
 * Probes: one real client request that re-checks an account the router cannot judge from what it
 * knows — a `window_exhausted` cooldown whose windows now read recovered (`recovery`), or an
 * account with no quota evidence at all (`evidence`). At most one probe is in flight per account;
 * a probe that fails backs the next one off exponentially. Pure: the time is always an argument.
 *
 * The limit warm-up (`warm_up`, docs/routing.md#limit-warm-up) is the same kind of probe sent by the
 * router itself: one small request when a window of an opted-in account has newly reset
 * ({@link newlyResetWindow}); it shares the account's record, so one probe of any use is in flight at a time.
 *
 * Authority: docs/routing.md#recovery-probes. The proxy keeps one {@link ProbeRecord} per account
 * (src/proxy/state/probes.ts).
 */
import { recoverySuggested } from '../quota/cooldown';
import type { Cooldown, QuotaSnapshot, QuotaWindow } from '../quota/types';
import type { AccountMetrics } from './metrics';

/** Why an account takes a probe: its cooldown looks over (`recovery`), or nothing is known of its quota (`evidence`). */
export type ProbeKind = 'recovery' | 'evidence';

/** What a probe is for: a request's re-check ({@link ProbeKind}), or the router's own limit warm-up. */
export type ProbeUse = ProbeKind | 'warm_up';

/** The usage windows whose reset a limit warm-up follows: the 5-hour and the 7-day window. */
export type ResetWindow = '5h' | '7d';

/** The first back-off after a failed probe: 1 min, in ms. */
export const PROBE_BACKOFF_BASE_MS = 60_000;
/** The longest back-off between two probes of one account: 1 h, in ms. */
export const PROBE_BACKOFF_MAX_MS = 60 * 60_000;

/** One account's probes. Absent: none in flight, none failed. */
export interface ProbeRecord {
  /** A probe request is on its way now. */
  inFlight: boolean;
  /** Probes that failed in a row (0 after a success: the record is then dropped). */
  failures: number;
  /** No probe before this time, epoch ms (0: any time). */
  notBeforeMs: number;
}

/** Whether an account with `record` may take a probe at `nowMs` (epoch ms): none in flight and its back-off is over. */
export function mayProbe(record: ProbeRecord | undefined, nowMs: number): boolean {
  return record === undefined || (!record.inFlight && nowMs >= record.notBeforeMs);
}

/** The record once a probe has started. */
export function probeStarted(record: ProbeRecord | undefined): ProbeRecord {
  return { inFlight: true, failures: record?.failures ?? 0, notBeforeMs: record?.notBeforeMs ?? 0 };
}

/**
 * The record once a probe has ended at `nowMs` (epoch ms): undefined after a success (the account
 * is judged again from scratch), else `failures` + 1 and the next probe no earlier than
 * now + 1 min × 2^(failures − 1), at most 1 h. `ok` undefined: the probe never reached the
 * account (the client left first) — only the in-flight mark goes.
 */
export function probeEnded(record: ProbeRecord | undefined, ok: boolean | undefined, nowMs: number): ProbeRecord | undefined {
  if (ok === true) return undefined;
  if (ok === undefined) return record && record.failures > 0 ? { ...record, inFlight: false } : undefined;
  const failures = (record?.failures ?? 0) + 1;
  const backoff = Math.min(PROBE_BACKOFF_MAX_MS, PROBE_BACKOFF_BASE_MS * 2 ** (failures - 1));
  return { inFlight: false, failures, notBeforeMs: nowMs + backoff };
}

/** What {@link probeKindOf} reads of one account. */
export interface ProbeFacts {
  metrics: AccountMetrics;
  cooldown: Cooldown | undefined;
  snapshot: QuotaSnapshot | undefined;
  needsSignIn: boolean;
  /** An OAuth account: its answers carry quota headers and the usage endpoint can read it (an API key has neither). */
  reportsQuota: boolean;
}

/**
 * Why the account would be re-checked now (`nowMs`, epoch ms), ignoring the probe record, or undefined:
 * - `recovery`: it is out only by a `window_exhausted` cooldown (no sign-in flag, no rejected
 *   window in its evidence) and the evidence suggests that cooldown is over
 *   ({@link recoverySuggested} in src/quota/cooldown.ts);
 * - `evidence`: it is usable, reports quota, and nothing is known of its quota yet (freshness `unknown`).
 */
export function probeKindOf(f: ProbeFacts, nowMs: number): ProbeKind | undefined {
  const m = f.metrics;
  if (f.needsSignIn || !f.reportsQuota) return undefined;
  if (m.unusableReason === 'cooldown') {
    if (m.hardSaturated || m.scopedRejected || f.cooldown === undefined) return undefined;
    return recoverySuggested(f.cooldown, f.snapshot, nowMs) ? 'recovery' : undefined;
  }
  return m.usable && m.freshness === 'unknown' ? 'evidence' : undefined;
}

/**
 * The window that `next` shows newly reset against `prev` (both merged snapshots of one account),
 * or undefined. Newly reset: `prev` knew the window's reset time, `next` observed the window at or
 * after that time (the reset passed), and it shows a new window — a later reset time, or a lower
 * utilisation (fraction) than before. A first snapshot (no `prev`) confirms nothing.
 */
export function newlyResetWindow(prev: QuotaSnapshot | undefined, next: QuotaSnapshot): ResetWindow | undefined {
  if (!prev) return undefined;
  if (windowReset(prev.session, next.session, next.observedAtMs)) return '5h';
  if (windowReset(prev.weekly, next.weekly, next.observedAtMs)) return '7d';
  return undefined;
}

function windowReset(before: QuotaWindow | undefined, after: QuotaWindow | undefined, observedAtMs: number): boolean {
  const resetAt = before?.resetAtMs;
  if (!resetAt || !after || (after.observedAtMs ?? observedAtMs) < resetAt) return false;
  return (after.resetAtMs ?? 0) > resetAt || (after.utilization !== undefined && after.utilization < (before.utilization ?? 0));
}
