/**
 * Session binding at commit: the moment an answer is committed to the client,
 * its session is bound to the account that serves it (before a stream ends,
 * so the session's next request finds the binding).
 */
import { isEligible, type PlanAccount } from '../../routing/plan';
import { strategyFor } from '../../routing/planner/strategies/registry';
import type { RequestContext } from './context';
import { accountMetrics } from './eligibility';

/**
 * Binds the session of a Messages call to `served` — unless the session's bound account was
 * never attempted and is still eligible (the request only overflowed a cap), in which case the
 * old binding stays; a sticky reallocation (the plan moved the session off an account over a
 * sticky threshold) always moves it. Fallbacks never bind.
 * @param attempted labels of the accounts this request tried
 */
export function bindOnCommit(ctx: RequestContext, served: PlanAccount, attempted: ReadonlySet<string>): void {
  const sessionId = ctx.info.sticky.keyHash;
  const { policy } = ctx.generation.config;
  if (ctx.route !== 'messages' || !sessionId || served.fallback || !policy.sessionAffinity || !strategyFor(policy.strategy).bindsSessions) return;
  // A reload may have switched affinity off (clearing the store) or removed the account
  // while this request ran: then it must not bind.
  const s = ctx.services;
  const live = s.live;
  if (!live.config.policy.sessionAffinity || !strategyFor(live.config.policy.strategy).bindsSessions || !live.accountsByLabel.has(served.id)) return;
  const now = s.now();
  const bound = s.state.affinity.get(sessionId, now);
  // A sticky reallocation moved the session off its account on purpose: the binding follows the serving account (on-serve).
  const reallocated = ctx.plan?.affinity.skippedReason === 'over_sticky_threshold';
  if (bound && bound.account !== served.id && !reallocated && !attempted.has(bound.account) && isEligible(accountMetrics(s.state, bound.account, ctx.params, now))) {
    s.state.affinity.bind(sessionId, bound.account, now);
    return;
  }
  s.state.affinity.bind(sessionId, served.id, now);
}
