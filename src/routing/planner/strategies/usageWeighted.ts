/**
 * `usage-weighted`: the least used first — lowest weekly utilisation, then lowest 5h utilisation
 * (fractions; an unknown window reads as unused), then configured order.
 */
import type { PlanAccount } from '../types';
import { tailLoss, withTails } from './common';
import type { Strategy } from './strategy';

function compare(a: PlanAccount, b: PlanAccount): number {
  const wa = a.metrics.weeklyUsed ?? 0;
  const wb = b.metrics.weeklyUsed ?? 0;
  if (wa !== wb) return wa < wb ? -1 : 1;
  const sa = a.metrics.sessionUsed ?? 0;
  const sb = b.metrics.sessionUsed ?? 0;
  if (sa !== sb) return sa < sb ? -1 : 1;
  return a.index - b.index;
}

export const usageWeighted: Strategy = {
  name: 'usage-weighted',
  summary: 'the least used account first (weekly, then 5-hour utilisation)',
  description:
    "The least used account first (weekly, then 5-hour): evens out usage, but spends every account's allowance at the same pace. Affinity, prefer-earlier-reset and spill apply.",
  modifiers: new Set(['affinity', 'prefer-earlier-reset', 'spill']),
  bindsSessions: true,
  order: (input) => withTails(input, [...input.eligible].sort(compare), 'least_used'),
  lossReason: (winner, loser) => tailLoss(winner, loser, sameUse(winner, loser) ? 'insertion_order' : 'least_used'),
};

function sameUse(a: PlanAccount, b: PlanAccount): boolean {
  return (a.metrics.weeklyUsed ?? 0) === (b.metrics.weeklyUsed ?? 0) && (a.metrics.sessionUsed ?? 0) === (b.metrics.sessionUsed ?? 0);
}
