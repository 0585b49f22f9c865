/**
 * Step 5, only when the pool is shared through a store (docs/shared-pool.md): a session this
 * router holds no binding for may be bound through another router, so its binding is read from
 * the store before planning (one round trip, bounded). A bound session — the common case — costs
 * nothing here: other routers' bindings arrive over pub/sub.
 */
import { strategyFor } from '../../routing/planner/strategies/registry';
import type { RequestContext } from './context';

export function sharedBinding(ctx: RequestContext): Promise<boolean | void> | void {
  const shared = ctx.services.shared;
  if (!shared || ctx.route !== 'messages') return;
  const session = ctx.info.sticky.keyHash;
  const { policy } = ctx.generation.config;
  if (!session || !policy.sessionAffinity || !strategyFor(policy.strategy).bindsSessions) return;
  if (ctx.services.state.affinity.get(session, ctx.services.now())) return;
  return shared.lookupBinding(session);
}
