/**
 * `reset-drain`: the weekly reset by whole-day bucket (floor(reset ms / 86 400 000), soonest first;
 * no pending reset last), then most remaining weekly capacity, then configured order.
 */
import type { PlanAccount, SelectionReason } from '../types';
import { tailLoss, weeklyRemaining, withTails } from './common';
import type { Strategy } from './strategy';

const DAY_MS = 86_400_000;

/** The weekly reset's day bucket; +∞ when no reset is pending. */
export const dayBucket = (a: PlanAccount): number => (Number.isFinite(a.metrics.weeklyResetMs) ? Math.floor(a.metrics.weeklyResetMs / DAY_MS) : Infinity);

function compare(a: PlanAccount, b: PlanAccount): number {
  const da = dayBucket(a);
  const db = dayBucket(b);
  if (da !== db) return da < db ? -1 : 1;
  const ra = weeklyRemaining(a);
  const rb = weeklyRemaining(b);
  if (ra !== rb) return ra > rb ? -1 : 1;
  return a.index - b.index;
}

/** Which key separates the pair. */
function separatedBy(a: PlanAccount, b: PlanAccount): SelectionReason {
  if (dayBucket(a) !== dayBucket(b)) return 'reset_bucket';
  return weeklyRemaining(a) !== weeklyRemaining(b) ? 'remaining_capacity' : 'insertion_order';
}

export const resetDrain: Strategy = {
  name: 'reset-drain',
  summary: 'spends the allowance whose weekly reset comes soonest (whole days), then the fullest remaining',
  description:
    'The account whose weekly reset comes soonest (whole days) first, then the fullest remaining: consumes expiring quota, but can create timing-shaped bursts. Affinity and spill apply.',
  modifiers: new Set(['affinity', 'spill', 'evidence-probe']),
  bindsSessions: true,
  order(input) {
    const head = [...input.eligible].sort(compare);
    return withTails(input, head, head.length >= 2 ? separatedBy(head[0], head[1]) : 'reset_bucket');
  },
  lossReason: (winner, loser) => tailLoss(winner, loser, separatedBy(winner, loser)),
};
