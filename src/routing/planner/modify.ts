/**
 * Stage 3, modify: affinity (with the sticky reallocation thresholds), then prefer-primary, then
 * prefer-earlier-reset, then spill, each only when the strategy lets it act
 * (docs/routing.md#precedence-affinity-and-spill), then the probe (docs/routing.md#recovery-probes). Pure.
 */
import type { RoutingPolicy } from '../policy';
import type { SessionBinding } from '../affinity';
import { boundPlacement, boundSituation } from '../rebind';
import { rebindModeOf } from './strategies/registry';
import { atInflightCap, isEligible } from './filter';
import type { AffinityOutcome, AffinitySkipReason, PlanAccount, ProbeOutcome, SelectionReason, SpillOutcome } from './types';
import type { Modifier } from './strategies/strategy';
import type { FilterVerdict } from './verdict';

/** A sticky reallocation: the bound account was over a threshold, so the session moved to `to`. */
export interface StickyMove {
  from: string;
  to: string;
  /** The bound account's verdict, with its figures. */
  verdict: Extract<FilterVerdict, { code: 'over_sticky_threshold' }>;
}

/** What the modifiers did to the order stage's order. */
export interface Modified {
  order: PlanAccount[];
  reason: SelectionReason;
  affinity: AffinityOutcome;
  spill: SpillOutcome | null;
  /** A modifier moved another account to the front. */
  moved: boolean;
  /** Set when the sticky thresholds moved the session off its bound account. */
  sticky: StickyMove | null;
  /** Set when the first account is tried as a probe. */
  probe: ProbeOutcome | null;
}

/** Percent used (0–100) as the sticky thresholds read it: reported usage (unknown = 0) plus the in-flight pressure. */
function pressure(used: number | null, a: PlanAccount, policy: RoutingPolicy): number {
  return Math.round(((used ?? 0) * 100 + a.inflight * policy.inflightPenaltyPct) * 100) / 100;
}

/**
 * The account's sticky-threshold verdict when it is over a threshold (more than the threshold
 * percent used, with in-flight pressure; the 5h window first), else null. Both thresholds off → null.
 */
export function overStickyThreshold(a: PlanAccount, policy: RoutingPolicy): StickyMove['verdict'] | null {
  const t5 = policy.stickyThreshold5h;
  if (t5 !== undefined) {
    const used = pressure(a.metrics.sessionUsed, a, policy);
    if (used > t5) return { code: 'over_sticky_threshold', window: '5h', used, threshold: t5 };
  }
  const t7 = policy.stickyThreshold7d;
  if (t7 !== undefined) {
    const used = pressure(a.metrics.weeklyUsed, a, policy);
    if (used > t7) return { code: 'over_sticky_threshold', window: '7d', used, threshold: t7 };
  }
  return null;
}

const DAY_MS = 86_400_000;

/**
 * prefer-earlier-reset's key: the day bucket (floor(epoch ms / 86 400 000)) of the weekly reset; an
 * account with no known weekly reset uses its 5h reset (same buckets); +∞ with neither.
 */
export function earlierResetBucket(a: PlanAccount): number {
  const m = a.metrics;
  if (Number.isFinite(m.weeklyResetMs)) return Math.floor(m.weeklyResetMs / DAY_MS);
  return Number.isFinite(m.sessionResetMs) ? Math.floor(m.sessionResetMs / DAY_MS) : Infinity;
}

/**
 * The eligible accounts of `order` in the soonest bucket first (in their order), then the rest in
 * theirs: a stable partition, so the result is a permutation of `order`. `order` itself when no
 * eligible account has a known reset.
 */
export function preferEarlierReset(order: readonly PlanAccount[]): readonly PlanAccount[] {
  let best = Infinity;
  for (const a of order) {
    if (!isEligible(a.metrics)) continue;
    const b = earlierResetBucket(a);
    if (b < best) best = b;
  }
  if (best === Infinity) return order;
  const head: PlanAccount[] = [];
  const rest: PlanAccount[] = [];
  for (const a of order) (isEligible(a.metrics) && earlierResetBucket(a) === best ? head : rest).push(a);
  return head.length === 0 || rest.length === 0 ? order : [...head, ...rest];
}

const NO_AFFINITY: AffinityOutcome = Object.freeze({ sessionBound: false, boundAccount: null, applied: false, skippedReason: 'disabled' });

/**
 * The affinity outcome for a session whose binding is `binding`, among `ranked`, at `nowMs` (epoch ms), by the
 * rule table of ../rebind.ts: the bound account goes first while it is eligible, while it only blips (a transient
 * cooldown ending within the blip wait: the attempt loop waits for it), and at the soft limit unless on-serve
 * finds another account below it.
 */
export function affinityOutcome(
  policy: RoutingPolicy,
  sessionId: string | null,
  binding: SessionBinding | undefined,
  ranked: readonly PlanAccount[],
  nowMs: number,
): AffinityOutcome {
  const bound = binding?.account ?? null;
  let skippedReason: AffinitySkipReason | null = null;
  if (!policy.sessionAffinity) skippedReason = 'disabled';
  else if (sessionId === null) skippedReason = 'no_session';
  else if (bound === null) skippedReason = 'expired';
  else {
    const account = ranked.find((a) => a.id === bound);
    // The common case (usable, below the soft limit) decides without the table.
    if (!account || !account.metrics.usable || account.metrics.sessionSaturated) {
      const situation = boundSituation(account?.metrics, account?.cooldownReason, nowMs, policy.sessionAffinityBlipWaitMs);
      const otherEligible = situation === 'soft_limit' && ranked.some((a) => a !== account && isEligible(a.metrics));
      const placement = boundPlacement(situation, rebindModeOf(policy), otherEligible);
      if (placement === 'skip_unusable') skippedReason = 'unusable';
      else if (placement === 'skip_soft_limit') skippedReason = 'session_saturated';
    }
  }
  // One literal in record order (sessionBound, boundAccount, applied, skippedReason): this runs per request.
  return { sessionBound: bound !== null, boundAccount: bound, applied: skippedReason === null, skippedReason };
}

/**
 * Applies the modifiers in `allowed` to `ranked` (the order stage's order, fallbacks excluded).
 * `scoreReadsBinding`: the strategy's own order already weighs the binding (weighted); affinity is
 * reported but not applied twice, and counts as active only when the bound account came first.
 */
export function modify(
  ranked: PlanAccount[],
  reason: SelectionReason,
  allowed: ReadonlySet<Modifier>,
  scoreReadsBinding: boolean,
  policy: RoutingPolicy,
  sessionId: string | null,
  binding: SessionBinding | undefined,
  nowMs: number,
): Modified {
  let affinity = NO_AFFINITY;
  let order = ranked;
  let moved = false;
  let sticky: StickyMove | null = null;
  if (allowed.has('affinity')) {
    affinity = affinityOutcome(policy, sessionId, binding, ranked, nowMs);
    // Sticky reallocation (on-serve only: the binding then moves to the account that serves): off the
    // bound account only when it is over a threshold and another eligible account is over neither.
    const thresholds = policy.stickyThreshold5h !== undefined || policy.stickyThreshold7d !== undefined;
    if (affinity.applied && thresholds && rebindModeOf(policy) === 'on-serve') {
      const bound = order.find((a) => a.id === affinity.boundAccount)!;
      const verdict = overStickyThreshold(bound, policy);
      const target = verdict && order.find((a) => a !== bound && isEligible(a.metrics) && !atInflightCap(a, policy) && overStickyThreshold(a, policy) === null);
      if (verdict && target) {
        sticky = { from: bound.id, to: target.id, verdict };
        affinity = { ...affinity, applied: false, skippedReason: 'over_sticky_threshold' };
        moved = order[0] !== target;
        order = moveToFront(order, target.id);
        reason = 'sticky_reallocation';
      }
    }
    if (affinity.applied) {
      moved = order[0]?.id !== affinity.boundAccount;
      order = moveToFront(order, affinity.boundAccount!);
      reason = 'session_affinity';
    }
  } else if (scoreReadsBinding) {
    const outcome = affinityOutcome(policy, sessionId, binding, ranked, nowMs);
    const first = outcome.applied && order[0]?.id === outcome.boundAccount;
    affinity = first ? outcome : { ...outcome, applied: false };
  }
  // The session's account (bound, or the one it moved to) stays first; later modifiers order the rest.
  const placed = affinity.applied || sticky !== null;
  let primaryFirst = false;
  if (allowed.has('prefer-primary') && policy.preferPrimary && policy.primaryAccount !== undefined) {
    const p = order.find((a) => a.id === policy.primaryAccount);
    primaryFirst = p !== undefined && !placed && isEligible(p.metrics);
    if (p && isEligible(p.metrics) && order[0] !== p) {
      order = placed ? [order[0], p, ...order.slice(1).filter((a) => a !== p)] : moveToFront(order, p.id);
      if (!placed) {
        reason = 'preferred_primary';
        moved = true;
      }
    }
  }
  if (allowed.has('prefer-earlier-reset') && policy.preferEarlierReset && order.length > 1) {
    // A placed session or a preferred primary keeps the front; the restriction orders what follows.
    const keep = placed || primaryFirst ? 1 : 0;
    const rest = order.slice(keep);
    const tail = preferEarlierReset(rest);
    if (tail !== rest) {
      const front = order[keep];
      order = keep ? [order[0], ...tail] : [...tail];
      if (!keep && order[0] !== front) {
        reason = 'earlier_reset';
        moved = true;
      }
    }
  }
  let spill: SpillOutcome | null = null;
  if (allowed.has('spill') && policy.spillInflight > 0 && !placed && order.length > 1) {
    const first = order[0];
    const n = policy.spillInflight;
    if (first.metrics.usable && first.inflight >= n) {
      const target = order.slice(1).find((a) => a.metrics.usable && a.inflight < n && !atInflightCap(a, policy));
      if (target) {
        spill = { from: first.id, to: target.id, inflight: first.inflight };
        order = moveToFront(order, target.id);
        reason = 'spill_inflight';
        moved = true;
      }
    }
  }
  // A probe: a request without an active binding re-checks one account first (a bound session would pay a cache write elsewhere).
  let probe: ProbeOutcome | null = null;
  if (!placed && order.length > 0) {
    const target = order.find((a) => a.probe === 'recovery') ?? (allowed.has('evidence-probe') ? evidenceProbeTarget(order) : undefined);
    if (target) {
      probe = { account: target.id, kind: target.probe! };
      if (order[0] !== target) {
        order = moveToFront(order, target.id);
        reason = probe.kind === 'recovery' ? 'recovery_probe' : 'evidence_probe';
        moved = true;
      }
    }
  }
  return { order, reason, affinity, spill, moved, sticky, probe };
}

/**
 * The account an evidence probe goes to: the first account itself when it has no quota evidence
 * and nothing in flight; else, when the first account is busy (a request in flight), the first
 * account without evidence and with nothing in flight. A lone request keeps known quota first.
 */
function evidenceProbeTarget(order: readonly PlanAccount[]): PlanAccount | undefined {
  const first = order[0];
  if (first.probe === 'evidence' && first.inflight === 0) return first;
  return first.inflight > 0 ? order.find((a) => a.probe === 'evidence' && a.inflight === 0) : undefined;
}

function moveToFront(order: readonly PlanAccount[], id: string): PlanAccount[] {
  const target = order.find((a) => a.id === id);
  return target ? [target, ...order.filter((a) => a !== target)] : [...order];
}
