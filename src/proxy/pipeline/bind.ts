/**
 * Session binding at commit: the moment an answer is committed to the client,
 * its session is bound to the account that serves it (before a stream ends,
 * so the session's next request finds the binding) — or, when another account
 * than its bound one served, the rule table of src/routing/rebind.ts decides
 * whether the binding follows. A request that is not a conversation turn (class `auxiliary` or
 * `compaction`, src/routing/requestClass.ts) never binds.
 */
import type { AttemptRecord } from '../../routing/decision';
import { bindingFollows, boundSituation, type BoundSituation } from '../../routing/rebind';
import type { PlanAccount } from '../../routing/plan';
import { rebindModeOf, strategyFor } from '../../routing/planner/strategies/registry';
import { isAuxiliaryClass } from '../../routing/requestClass';
import type { RequestContext } from './context';
import { accountMetrics } from './eligibility';

/**
 * Binds the session of a Messages call to `served`, unless the rule table keeps its bound account
 * (a blip of that account; a longer transient failure in `on-quota`; a bound account this request
 * never tried — it only overflowed a cap); a kept binding is renewed. Fallbacks never bind, nor do
 * auxiliary requests (they are planned like any other, but leave the binding as it was).
 * @param attempted labels of the accounts this request tried
 * @param attempts this request's attempt records so far
 */
export function bindOnCommit(ctx: RequestContext, served: PlanAccount, attempted: ReadonlySet<string>, attempts: readonly AttemptRecord[]): void {
  const sessionId = ctx.info.sticky.keyHash;
  const { policy } = ctx.generation.config;
  if (ctx.route !== 'messages' || !sessionId || served.fallback || isAuxiliaryClass(ctx.requestClass)) return;
  if (!policy.sessionAffinity || !strategyFor(policy.strategy).bindsSessions) return;
  // A reload may have switched affinity off (clearing the store) or removed the account
  // while this request ran: then it must not bind.
  const s = ctx.services;
  const live = s.live;
  if (!live.config.policy.sessionAffinity || !strategyFor(live.config.policy.strategy).bindsSessions || !live.accountsByLabel.has(served.id)) return;
  const now = s.now();
  const bound = s.state.affinity.get(sessionId, now);
  if (bound && bound.account !== served.id) {
    const skipped = ctx.plan?.affinity.skippedReason;
    const follows = bindingFollows(rebindModeOf(policy), {
      situation: situationOf(ctx, bound.account, attempts, now),
      attempted: attempted.has(bound.account),
      movedByPlan: skipped === 'over_sticky_threshold' || skipped === 'session_saturated',
    });
    if (!follows) {
      s.state.bind(sessionId, bound.account, now);
      return;
    }
  }
  s.state.bind(sessionId, served.id, now);
}

/** The bound account's situation now; an account that cannot serve this request's shape (the entitlement 429) counts as lost. */
function situationOf(ctx: RequestContext, label: string, attempts: readonly AttemptRecord[], now: number): BoundSituation {
  const s = ctx.services;
  const info = s.live.accountsByLabel.get(label);
  if (!info?.enabled || info.fallback || attempts.some((a) => a.account === label && a.result === 'entitlement')) return 'lost';
  const metrics = accountMetrics(s.state, label, ctx.params, now);
  return boundSituation(metrics, s.state.cooldowns.get(label)?.reason, now, ctx.generation.config.policy.sessionAffinityBlipWaitMs);
}
