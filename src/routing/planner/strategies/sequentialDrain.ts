/**
 * `sequential-drain`: the configured order; the next account only when the ones before it are
 * ineligible (cooling, exhausted, at the soft limit, needing sign-in).
 */
import { tailLoss, withTails } from './common';
import type { Strategy } from './strategy';

export const sequentialDrain: Strategy = {
  name: 'sequential-drain',
  summary: 'drains accounts one after another in the configured order',
  description:
    'Configured order; the next account only when the one before is unusable: predictable, for maintenance or explicit rotation, not a safety-first default. Affinity applies.',
  modifiers: new Set(['affinity']),
  bindsSessions: true,
  order: (input) => withTails(input, [...input.eligible], 'sequential_order'),
  lossReason: (winner, loser) => tailLoss(winner, loser, 'sequential_order'),
};
