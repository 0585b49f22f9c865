/**
 * The cost a Messages attempt reserves on its account with its lease (docs/cost-leases.md): input
 * from the body's size — read from the session's warm cache on its bound account, written to a
 * cold one elsewhere — and output from the model's adaptive estimate, capped by `max_tokens`.
 * Taken in the same synchronous section as the plan, so the next request's plan sees it.
 */
import { estimateCost, outputLeaseTokens, type CacheTemperature } from '../../routing/costEstimate';
import type { PlanAccount } from '../../routing/plan';
import type { CostReservation } from '../state/leases';
import type { RequestContext } from './context';

/** What this request's attempt on `account` reserves: O(1), no look at the body beyond its length. */
export function costReservation(ctx: RequestContext, account: PlanAccount): CostReservation {
  const margin = ctx.generation.config.policy.costLeaseMargin;
  const model = ctx.info.model;
  const output = outputLeaseTokens(ctx.services.state.outputs.prediction(model), ctx.info.maxTokens, margin);
  return { cost: estimateCost(ctx.body.length, cacheTemperature(ctx, account), output, margin), model };
}

function cacheTemperature(ctx: RequestContext, account: PlanAccount): CacheTemperature {
  if (ctx.info.sticky.keyHash === null) return 'none';
  return ctx.plan.affinity.boundAccount === account.id ? 'warm' : 'cold';
}
