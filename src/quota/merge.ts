/**
 * Merging quota evidence over time. Pure.
 *
 * Rules (docs/routing.md#merging; docs/anthropic-api.md#usage-endpoint):
 * - evidence observed later wins for every group it reports (on equal times, `next` wins);
 * - a group the later evidence does not report is carried over only while its own observation is
 *   not older than {@link STALE_AFTER_MS} (15 min) relative to the merged snapshot's
 *   `observedAtMs`; otherwise it is dropped. Carried groups keep their own observation time
 *   (`QuotaWindow.observedAtMs`, `OverageInfo.observedAtMs`, `unifiedObservedAtMs`) so repeated
 *   merges cannot keep an old window alive forever;
 * - scoped windows merge per family, each keeping its own `observedAtMs`;
 * - reset jitter: when the winning reset differs from the other snapshot's reset for the same
 *   window by less than {@link RESET_JITTER_MS} (60 s), the earlier-observed reset is kept — the
 *   usage endpoint's `resets_at` wobbles by less than a second, and a genuine rollover moves it by
 *   60 s or more;
 * - the usage endpoint reports no unified verdict, but that verdict summarises the 5h and 7d
 *   windows: a later usage reading that shows both below their limit supersedes an older
 *   account-wide `rejected` verdict (one whose claim is not `seven_day_<family>`), which is dropped.
 * Groups: unified (`unifiedStatus`, `unifiedResetAtMs`, `representativeClaim`), `session`,
 * `weekly`, `overage`, and each scoped family.
 */
import { RESET_JITTER_MS, STALE_AFTER_MS } from './constants';
import { isRejectionStatus, normalizeStatus } from './status';
import type { OverageInfo, QuotaSnapshot, QuotaWindow, ScopedQuotaWindow } from './types';

/** One group of fields plus the time it was observed (epoch ms). */
interface Timed<T> {
  value: T;
  atMs: number;
}

/** Chooses between the earlier snapshot's group `a` and the later one's `b`; applies staleness and jitter. */
function pick<T extends { resetAtMs?: number }>(a: Timed<T> | undefined, b: Timed<T> | undefined, refMs: number): Timed<T> | undefined {
  let chosen: Timed<T> | undefined;
  let other: Timed<T> | undefined;
  if (b && (!a || b.atMs >= a.atMs)) {
    chosen = b;
    other = a;
  } else {
    chosen = a;
    other = b;
  }
  if (!chosen || refMs - chosen.atMs > STALE_AFTER_MS) return undefined;
  const r = chosen.value.resetAtMs;
  const o = other?.value.resetAtMs;
  if (r !== undefined && o !== undefined && Math.abs(r - o) < RESET_JITTER_MS && r !== o) {
    const value = { ...chosen.value };
    value.resetAtMs = o;
    return { value, atMs: chosen.atMs };
  }
  return chosen;
}

/** Stamps a carried group's own observation time, or removes the stamp when it equals the snapshot's. */
function stamp<T extends { observedAtMs?: number }>(t: Timed<T>, refMs: number): T {
  if (t.atMs < refMs) {
    const stamped = { ...t.value };
    stamped.observedAtMs = t.atMs;
    return stamped;
  }
  if (t.value.observedAtMs === undefined) return t.value; // snapshots are never mutated: share it
  // Copied without the stamp rather than `delete`d (which leaves a slow dictionary-mode object).
  const { observedAtMs: _stamp, ...rest } = t.value;
  return rest as T;
}

function timedWindow<W extends QuotaWindow | OverageInfo>(w: W | undefined, snap: QuotaSnapshot): Timed<W> | undefined {
  return w ? { value: w, atMs: w.observedAtMs ?? snap.observedAtMs } : undefined;
}

interface Unified {
  status?: string;
  resetAtMs?: number;
  claim?: string;
}

function timedUnified(s: QuotaSnapshot): Timed<Unified> | undefined {
  if (s.unifiedStatus === undefined && s.unifiedResetAtMs === undefined && s.representativeClaim === undefined) return undefined;
  return {
    value: { status: s.unifiedStatus, resetAtMs: s.unifiedResetAtMs, claim: s.representativeClaim },
    atMs: s.unifiedObservedAtMs ?? s.observedAtMs,
  };
}

/** A carried account-wide `rejected` unified verdict that the later usage reading, with 5h and 7d both below their limit, supersedes. */
function supersededRejection(unified: Timed<Unified>, later: QuotaSnapshot): boolean {
  if (later.source !== 'usage' || !(unified.atMs < later.observedAtMs) || normalizeStatus(unified.value.status) !== 'rejected') return false;
  if (unified.value.claim !== undefined && /^seven_day_./.test(unified.value.claim)) return false;
  const below = (w: QuotaWindow | undefined) => w !== undefined && w.status !== undefined && !isRejectionStatus(w.status) && (w.utilization ?? 0) < 1;
  return below(later.session) && below(later.weekly);
}

/**
 * Merges new quota evidence into the previous snapshot of the same account.
 *
 * @param prev the stored snapshot, or undefined (then `next` is returned unchanged).
 * @param next freshly parsed evidence (from `parseUnifiedHeaders` or `parseUsagePayload`).
 * @returns a new snapshot (inputs are not mutated) whose `observedAtMs` is the later of the two,
 *   whose `source` is the later one's, and whose groups follow the rules in this file's header.
 */
export function mergeSnapshot(prev: QuotaSnapshot | undefined, next: QuotaSnapshot): QuotaSnapshot {
  if (!prev) return next;
  if (repeats(prev, next)) return restamped(prev, next.observedAtMs, prev.scoped ?? {});
  return mergeByRules(prev, next);
}

/**
 * A copy of `s` observed at `observedAtMs` (epoch ms) with `scoped` as its model-scoped windows.
 *
 * The copy's members are assigned after the spread, never written `{ ...s, observedAtMs, scoped }`,
 * here and wherever a quota object of varying shape is copied on the answer path: V8 (Node 20)
 * keeps no cache for members defined in an object literal once a site has seen many shapes, so
 * that form takes the runtime's slow path on every call (docs/performance.md, "Why the hot path
 * looks the way it does", the entry for this module).
 */
export function restamped(s: QuotaSnapshot, observedAtMs: number, scoped: QuotaSnapshot['scoped']): QuotaSnapshot {
  const out = { ...s };
  out.observedAtMs = observedAtMs;
  out.scoped = scoped;
  return out;
}

/** {@link mergeSnapshot} with every rule applied, also to a repeat (which mergeSnapshot shortcuts; the tests compare the two). */
export function mergeByRules(prev: QuotaSnapshot, next: QuotaSnapshot): QuotaSnapshot {
  const refMs = Math.max(prev.observedAtMs, next.observedAtMs);
  const later = next.observedAtMs >= prev.observedAtMs ? next : prev;
  const out: QuotaSnapshot = { observedAtMs: refMs, source: later.source, scoped: {} };

  const unified = pick(timedUnified(prev), timedUnified(next), refMs);
  if (unified && !supersededRejection(unified, later)) {
    if (unified.value.status !== undefined) out.unifiedStatus = unified.value.status;
    if (unified.value.resetAtMs !== undefined) out.unifiedResetAtMs = unified.value.resetAtMs;
    if (unified.value.claim !== undefined) out.representativeClaim = unified.value.claim;
    if (unified.atMs < refMs) out.unifiedObservedAtMs = unified.atMs;
  }

  const session = pick(timedWindow(prev.session, prev), timedWindow(next.session, next), refMs);
  if (session) out.session = stamp(session, refMs);
  const weekly = pick(timedWindow(prev.weekly, prev), timedWindow(next.weekly, next), refMs);
  if (weekly) out.weekly = stamp(weekly, refMs);
  const overage = pick(timedWindow(prev.overage, prev), timedWindow(next.overage, next), refMs);
  if (overage) out.overage = stamp(overage, refMs);

  const scoped = new Map<string, ScopedQuotaWindow>();
  const own = (s: QuotaSnapshot, f: string): Timed<ScopedQuotaWindow> | undefined =>
    s.scoped && Object.hasOwn(s.scoped, f) ? { value: s.scoped[f], atMs: s.scoped[f].observedAtMs } : undefined;
  for (const family of new Set([...Object.keys(prev.scoped ?? {}), ...Object.keys(next.scoped ?? {})])) {
    const w = pick(own(prev, family), own(next, family), refMs);
    if (w) scoped.set(family, w.value);
  }
  out.scoped = Object.fromEntries(scoped);
  return out;
}

/**
 * Whether `next` is later evidence of exactly what `prev` holds, field for field, and neither holds
 * a carried group (one with a time of its own) or a model-scoped window. The rules then give `prev`
 * at `next`'s time, and {@link mergeSnapshot} returns that without their copies: most answers
 * repeat the previous answer's headers.
 */
function repeats(prev: QuotaSnapshot, next: QuotaSnapshot): boolean {
  return (
    next.observedAtMs >= prev.observedAtMs &&
    next.source === prev.source &&
    prev.unifiedObservedAtMs === undefined &&
    next.unifiedObservedAtMs === undefined &&
    next.unifiedStatus === prev.unifiedStatus &&
    next.unifiedResetAtMs === prev.unifiedResetAtMs &&
    next.representativeClaim === prev.representativeClaim &&
    sameWindow(prev.session, next.session) &&
    sameWindow(prev.weekly, next.weekly) &&
    sameOverage(prev.overage, next.overage) &&
    noScoped(prev) &&
    noScoped(next)
  );
}

/** Both absent, or equal in every field and neither carried. */
function sameWindow(a: QuotaWindow | undefined, b: QuotaWindow | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.status === b.status && a.utilization === b.utilization && a.resetAtMs === b.resetAtMs && a.observedAtMs === undefined && b.observedAtMs === undefined;
}

function sameOverage(a: OverageInfo | undefined, b: OverageInfo | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return (
    a.status === b.status &&
    a.inUse === b.inUse &&
    a.resetAtMs === b.resetAtMs &&
    a.utilization === b.utilization &&
    a.disabledReason === b.disabledReason &&
    a.observedAtMs === undefined &&
    b.observedAtMs === undefined
  );
}

function noScoped(s: QuotaSnapshot): boolean {
  for (const _family in s.scoped) return false;
  return true;
}
