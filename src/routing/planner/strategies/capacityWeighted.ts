/**
 * `capacity-weighted`: a weighted random draw among the eligible accounts, weight = remaining
 * weekly capacity (1 − 7d used, a fraction; an unknown window reads as full). The draw is seeded
 * from the request id. The latency modifier scales each weight (0.5–1) when the account was slow lately.
 */
import { latencyFactor, tailLoss, weeklyRemaining, weightedDraw, withTails } from './common';
import type { Strategy } from './strategy';

export const capacityWeighted: Strategy = {
  name: 'capacity-weighted',
  summary: 'draws an account at random, weighted by its remaining weekly capacity',
  description:
    'A random draw weighted by remaining weekly capacity: spreads load smoothly over healthy accounts, but the order is not predictable request by request. Affinity, prefer-earlier-reset, spill and latency weighting apply.',
  modifiers: new Set(['affinity', 'prefer-earlier-reset', 'spill', 'latency']),
  bindsSessions: true,
  order: (input) =>
    withTails(
      input,
      weightedDraw(input.eligible, (a) => weeklyRemaining(a) * latencyFactor(a), input.random),
      'capacity_draw',
    ),
  lossReason: (winner, loser) => tailLoss(winner, loser, 'capacity_draw'),
};
