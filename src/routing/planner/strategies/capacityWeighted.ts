/**
 * `capacity-weighted`: a weighted random draw among the eligible accounts, weight = remaining
 * weekly capacity (1 − 7d used, a fraction; an unknown window reads as full) × plan size when
 * every eligible account has one. The draw is seeded
 * from the request id. The latency modifier scales each weight (0.5–1) when the account was slow lately.
 */
import type { PlanAccount } from '../types';
import { latencyFactor, tailLoss, weeklyRemaining, weightedDraw, withTails } from './common';
import type { OrderInput, Strategy } from './strategy';

/**
 * The draw weight: remaining weekly capacity × plan size — but only when every eligible account
 * has a `plan-size` (an unknown size is no size: a guess of 1 would starve a larger plan) — ×
 * the latency factor.
 */
function draw(input: OrderInput): PlanAccount[] {
  const sized = input.eligible.every((a) => a.planSize !== undefined);
  return weightedDraw(input.eligible, (a) => weeklyRemaining(a) * (sized ? (a.planSize as number) : 1) * latencyFactor(a), input.random);
}

export const capacityWeighted: Strategy = {
  name: 'capacity-weighted',
  summary: 'draws an account at random, weighted by its remaining weekly capacity',
  description:
    'A random draw weighted by remaining weekly capacity: spreads load smoothly over healthy accounts, but the order is not predictable request by request. Affinity, prefer-earlier-reset, spill and latency weighting apply.',
  modifiers: new Set(['affinity', 'prefer-earlier-reset', 'spill', 'latency']),
  bindsSessions: true,
  order: (input) => withTails(input, draw(input), 'capacity_draw'),
  lossReason: (winner, loser) => tailLoss(winner, loser, 'capacity_draw'),
};
