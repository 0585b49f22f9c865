/**
 * Bindings survive blips: the one rule table for what happens to a session's binding when its
 * bound account cannot serve (docs/routing.md#bindings-and-blips). The planner reads it to place
 * the session (modify.ts), the bind step to decide whether the binding follows the account that
 * served (src/proxy/pipeline/bind.ts); the two room rows are the attempt loop's (src/proxy/pipeline/attempt.ts). Pure: the time is an argument.
 *
 * | the bound account                                   | on-serve (default)                      | on-quota                          |
 * |-----------------------------------------------------|-----------------------------------------|-----------------------------------|
 * | transient cooldown ending within the blip wait      | wait for it; the session stays          | same                              |
 * | no room, none of the session's requests on it       | wait for room up to the blip wait       | same                              |
 * | no room, the session's parallel request on it       | spills; binding kept                    | same                              |
 * | longer transient failure (throttle, 529, network)   | served elsewhere; binds there           | served elsewhere; binding kept    |
 * | quota exhausted, needs sign-in, revoked, removed    | binds to the account that serves        | same                              |
 * | at the session soft limit                           | moves only to an account below it       | stays                             |
 * | a better score elsewhere, another account's reset   | never moves                             | never moves                       |
 */
import { isTransientCooldown } from '../quota/cooldown';
import type { AccountMetrics } from './metrics';
import type { RebindMode } from './policy';

/**
 * Where a session's bound account stands for a request:
 * - `eligible`: usable and below the session soft limit;
 * - `soft_limit`: usable, at the session soft limit;
 * - `blip`: only a transient cooldown (throttle, overloaded, server error) keeps it out, and it
 *   ends within the blip wait;
 * - `transient`: only a transient cooldown keeps it out, ending later;
 * - `lost`: a usage window (5h, 7d, account-wide or the model's scoped one), sign-in, a
 *   revoked token (403) — or it is no longer offered (removed, disabled): undefined metrics.
 */
export type BoundSituation = 'eligible' | 'soft_limit' | 'blip' | 'transient' | 'lost';

/**
 * The situation of a bound account at `nowMs` (epoch ms).
 * @param m its metrics for this request; undefined when it is no longer offered (removed, disabled, a fallback)
 * @param cooldownReason the reason of its active cooldown, if any
 * @param blipWaitMs `session-affinity-blip-wait-ms` (ms)
 */
export function boundSituation(m: AccountMetrics | undefined, cooldownReason: string | undefined, nowMs: number, blipWaitMs: number): BoundSituation {
  if (!m) return 'lost';
  if (m.usable) return m.sessionSaturated ? 'soft_limit' : 'eligible';
  // Cooling for a transient reason is a blip only when nothing about its quota or sign-in blocks it too.
  if (m.unusableReason !== 'cooldown' || m.hardSaturated || m.scopedRejected || !isTransientCooldown(cooldownReason)) return 'lost';
  return m.coolingUntilMs - nowMs <= blipWaitMs ? 'blip' : 'transient';
}

/** How the planner treats the bound account: first (waiting for it when it blips), or skipped with a reason. */
export type BoundPlacement = 'first' | 'skip_unusable' | 'skip_soft_limit';

/**
 * The planner's row of the table.
 * @param otherEligible another account is usable and below the session soft limit
 */
export function boundPlacement(situation: BoundSituation, mode: RebindMode, otherEligible: boolean): BoundPlacement {
  switch (situation) {
    case 'eligible':
    case 'blip':
      return 'first';
    case 'soft_limit':
      // Low remaining quota alone never evicts in on-quota; in on-serve only a better place does.
      return mode === 'on-serve' && otherEligible ? 'skip_soft_limit' : 'first';
    case 'transient':
    case 'lost':
      return 'skip_unusable';
  }
}

/** What the bind step knows of a request that another account than the bound one served. */
export interface ServedElsewhere {
  /** The bound account's situation when the answer committed. */
  situation: BoundSituation;
  /** The request tried the bound account (and it failed). */
  attempted: boolean;
  /** The plan moved the session on purpose: off its soft-limited account, or a sticky reallocation. */
  movedByPlan: boolean;
}

/** Whether the binding follows the account that served (true) or stays on the bound account (false, renewed). */
export function bindingFollows(mode: RebindMode, e: ServedElsewhere): boolean {
  if (e.situation === 'lost' || e.movedByPlan) return true;
  if (e.situation === 'blip') return false;
  // A longer transient failure (a cooldown, or a failed attempt on an account that still looks usable).
  return mode === 'on-serve' && (e.situation === 'transient' || e.attempted);
}
