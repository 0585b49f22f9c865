/** Helpers the strategies share. Pure. */
import type { PlanAccount, SelectionReason } from '../types';
import type { OrderInput, OrderResult } from './strategy';

/** Unusable accounts after the rest: the one whose cooldown ends sooner first, then configured order (as both rankings do). */
export function unusableTail(unusable: readonly PlanAccount[]): PlanAccount[] {
  return [...unusable].sort((a, b) => (a.metrics.coolingUntilMs < b.metrics.coolingUntilMs ? -1 : a.metrics.coolingUntilMs > b.metrics.coolingUntilMs ? 1 : a.index - b.index));
}

/** Accounts at the soft limit: the one whose 5h window resets sooner first, then configured order. */
export function softTail(soft: readonly PlanAccount[]): PlanAccount[] {
  return [...soft].sort((a, b) => (a.metrics.sessionResetMs < b.metrics.sessionResetMs ? -1 : a.metrics.sessionResetMs > b.metrics.sessionResetMs ? 1 : a.index - b.index));
}

/**
 * The strategy's order of the eligible accounts, then the soft-limited, then the unusable ones.
 * The reason: `reason` when two or more eligible accounts were ordered, `single_account` with one
 * account in all, `availability` when only one was eligible, `no_account` with none.
 */
export function withTails(input: OrderInput, head: PlanAccount[], reason: SelectionReason): OrderResult {
  const order = [...head, ...softTail(input.soft), ...unusableTail(input.unusable)];
  if (order.length === 0) return { order, reason: 'no_account' };
  if (order.length === 1) return { order, reason: 'single_account' };
  return { order, reason: head.length >= 2 ? reason : 'availability' };
}

/** Why a loser is below the winner when both are eligible: `reason`; otherwise the filter's cause. */
export function tailLoss(winner: PlanAccount, loser: PlanAccount, reason: string): string {
  if (!loser.metrics.usable) return loser.metrics.unusableReason ?? 'unusable';
  if (loser.metrics.sessionSaturated && !winner.metrics.sessionSaturated) return 'session_headroom';
  return reason;
}

/**
 * A weighted draw without replacement, as one sort (Efraimidis–Spirakis: key = ln(u) / w, highest
 * first). `weight` ≥ 0; a zero weight goes after every positive one; ties (two zero weights) by
 * configured order. One draw per account, O(n log n).
 */
export function weightedDraw(accounts: readonly PlanAccount[], weight: (a: PlanAccount) => number, random: () => number): PlanAccount[] {
  const keyed = accounts.map((a) => {
    const w = weight(a);
    const u = random();
    return { a, key: w > 0 && Number.isFinite(w) ? Math.log(u) / w : -Infinity };
  });
  keyed.sort((x, y) => (x.key > y.key ? -1 : x.key < y.key ? 1 : x.a.index - y.a.index));
  return keyed.map((k) => k.a);
}

/** The latency modifier's share of an account's draw weight, 0.5–1 (src/routing/planner/latency.ts); 1 when not set. */
export function latencyFactor(a: PlanAccount): number {
  return a.latencyFactor ?? 1;
}

/** Remaining weekly capacity as a fraction: 1 − 7d used; an unknown window reads as full (1). */
export function weeklyRemaining(a: PlanAccount): number {
  const used = a.metrics.weeklyUsed;
  return used === null ? 1 : Math.max(0, 1 - used);
}

/** Usable first (keeps the attempt loop from walking dead accounts), then the primary, then configured order. */
export function configuredOrder<T extends PlanAccount>(accounts: readonly T[]): T[] {
  return [...accounts].sort((a, b) => Number(b.metrics.usable) - Number(a.metrics.usable) || Number(b.isPrimary) - Number(a.isPrimary) || a.index - b.index);
}
