/**
 * The strategy catalogue: every strategy registered by name, one line each. Adding a strategy is
 * one new module and one line here; the planner reads only this table.
 */
import { capacityWeighted } from './capacityWeighted';
import { fillFirst } from './fillFirst';
import { forecast } from './forecast';
import { relativeAvailability } from './relativeAvailability';
import { resetDrain } from './resetDrain';
import { roundRobin } from './roundRobin';
import { sequentialDrain } from './sequentialDrain';
import { singleAccount } from './singleAccount';
import { usageWeighted } from './usageWeighted';
import { weighted } from './weighted';
import type { RebindMode, RoutingPolicy } from '../../policy';
import type { Strategy } from './strategy';

export const STRATEGIES = {
  'fill-first': fillFirst,
  'round-robin': roundRobin,
  'capacity-weighted': capacityWeighted,
  'relative-availability': relativeAvailability,
  'usage-weighted': usageWeighted,
  'sequential-drain': sequentialDrain,
  'reset-drain': resetDrain,
  'single-account': singleAccount,
  weighted,
  forecast,
} as const satisfies Record<string, Strategy>;

/** A `strategy` value. */
export type StrategyName = keyof typeof STRATEGIES;

/** Every strategy name, in catalogue order (config enum, settings, docs). */
export const STRATEGY_NAMES = Object.keys(STRATEGIES) as [StrategyName, ...StrategyName[]];

/** The strategy registered as `name`; fill-first for a name that is not (never thrown on the request path). */
export function strategyFor(name: string): Strategy {
  return (STRATEGIES as Record<string, Strategy>)[name] ?? fillFirst;
}

/** The rebind mode `policy` runs with: its strategy's own (`forecast`: on-quota), else `session-affinity-rebind`. */
export function rebindModeOf(policy: Pick<RoutingPolicy, 'strategy' | 'sessionAffinityRebind'>): RebindMode {
  return strategyFor(policy.strategy).rebind ?? policy.sessionAffinityRebind;
}
