/**
 * `capacity-weighted`: a weighted random draw among the eligible accounts, weight = remaining
 * weekly capacity (1 − 7d used, a fraction; an unknown window reads as full). The draw is seeded
 * from the request id.
 */
import { tailLoss, weeklyRemaining, weightedDraw, withTails } from './common';
import type { Strategy } from './strategy';

export const capacityWeighted: Strategy = {
  name: 'capacity-weighted',
  summary: 'draws an account at random, weighted by its remaining weekly capacity',
  description:
    'A random draw weighted by remaining weekly capacity: spreads load smoothly over healthy accounts, but the order is not predictable request by request. Affinity, prefer-earlier-reset and spill apply.',
  modifiers: new Set(['affinity', 'prefer-earlier-reset', 'spill']),
  bindsSessions: true,
  order: (input) => withTails(input, weightedDraw(input.eligible, weeklyRemaining, input.random), 'capacity_draw'),
  lossReason: (winner, loser) => tailLoss(winner, loser, 'capacity_draw'),
};
