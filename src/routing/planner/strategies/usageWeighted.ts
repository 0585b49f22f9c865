/**
 * `usage-weighted`: the least used first — lowest weekly utilisation, then lowest 5h utilisation
 * (fractions; an unknown window reads as unused), then configured order.
 */
import type { PlanAccount } from '../types';
import { tailLoss, withTails } from './common';
import type { Strategy } from './strategy';

/** An eligible account with its two keys, read once per plan (the sort compares these). */
interface Keyed {
  a: PlanAccount;
  weekly: number;
  session: number;
}

function compare(x: Keyed, y: Keyed): number {
  if (x.weekly !== y.weekly) return x.weekly < y.weekly ? -1 : 1;
  if (x.session !== y.session) return x.session < y.session ? -1 : 1;
  return x.a.index - y.a.index;
}

function leastUsed(eligible: readonly PlanAccount[]): PlanAccount[] {
  const keyed = new Array<Keyed>(eligible.length);
  for (let i = 0; i < eligible.length; i++) {
    const a = eligible[i];
    keyed[i] = { a, weekly: a.metrics.weeklyUsed ?? 0, session: a.metrics.sessionUsed ?? 0 };
  }
  keyed.sort(compare);
  const out = new Array<PlanAccount>(keyed.length);
  for (let i = 0; i < keyed.length; i++) out[i] = keyed[i].a;
  return out;
}

export const usageWeighted: Strategy = {
  name: 'usage-weighted',
  summary: 'the least used account first (weekly, then 5-hour utilisation)',
  description:
    "The least used account first (weekly, then 5-hour): evens out usage, but spends every account's allowance at the same pace. Affinity, prefer-earlier-reset and spill apply.",
  modifiers: new Set(['affinity', 'prefer-earlier-reset', 'spill']),
  bindsSessions: true,
  order: (input) => withTails(input, leastUsed(input.eligible), 'least_used'),
  lossReason: (winner, loser) => tailLoss(winner, loser, sameUse(winner, loser) ? 'insertion_order' : 'least_used'),
};

function sameUse(a: PlanAccount, b: PlanAccount): boolean {
  return (a.metrics.weeklyUsed ?? 0) === (b.metrics.weeklyUsed ?? 0) && (a.metrics.sessionUsed ?? 0) === (b.metrics.sessionUsed ?? 0);
}
