/**
 * Same-account retry (docs/routing.md#same-account-retry): an account that answers a short
 * throttle — a 429 with a `retry-after` of at most `session-affinity-blip-wait-ms` — is waited for
 * and tried again instead of moving the request (and its prompt cache) to another account. At most
 * {@link MAX_SAME_ACCOUNT_RETRIES} per request. A request of the session bound to that account
 * waits as the binding table's blip row says; any other takes a slot of the account's retry
 * budget (shared by concurrent requests per cooling window) or moves on at once. Quota
 * rejections, longer throttles and every other failure move on at once.
 */
import type { AttemptRecord } from '../../routing/decision';
import type { PlanAccount } from '../../routing/plan';
import { parseRetryAfterMs } from '../../quota/time';
import type { RequestContext } from './context';
import { afterWait, holdForAccount, type AfterWait } from './transientWait';
import type { AttemptStep } from './tryAccount';

/** Same-account retries one request makes at most (the design seed's figure). */
export const MAX_SAME_ACCOUNT_RETRIES = 2;

/**
 * After `step` of an attempt on `account`: when it is a short throttle and this request has a
 * retry left, waits until the account's cooldown ends and its paced release lets the request go.
 * @param attempts this request's attempt records (the last is `step`'s)
 * @param retries this request's same-account retries so far, incremented when one is taken
 * @returns `try` it again now (it recovered and has room); `replan` (it waited, but the account did not
 *   recover: the pool changed); `go_on` with the next account (no retry applies, or the waiting room was full)
 */
export async function retrySameAccount(
  ctx: RequestContext,
  account: PlanAccount,
  step: AttemptStep,
  attempts: readonly AttemptRecord[],
  retries: { count: number },
): Promise<AfterWait> {
  const last = attempts[attempts.length - 1];
  if (step.next !== 'rotate' || retries.count >= MAX_SAME_ACCOUNT_RETRIES || last?.account !== account.id || last.result !== 'throttle') return 'go_on';
  const s = ctx.services;
  const now = s.now();
  const blipWaitMs = ctx.generation.config.policy.sessionAffinityBlipWaitMs;
  const retryAfterMs = parseRetryAfterMs(step.held?.headers['retry-after'], now);
  // Only the upstream's own short word: a throttle without `retry-after` (a concurrency limit) is not retried here.
  if (retryAfterMs === undefined || retryAfterMs > blipWaitMs) return 'go_on';
  const cooldown = s.state.cooldowns.get(account.id);
  // The throttle may have met a longer cooldown (a window's): then it is no blip.
  if (cooldown && (cooldown.reason !== 'throttle' || cooldown.untilMs - now > blipWaitMs)) return 'go_on';
  const until = cooldown?.untilMs ?? now;
  const bound = ctx.plan.affinity.boundAccount === account.id;
  if (!bound && !s.retryBudget.take(account.id, until, now)) return 'go_on';
  retries.count++;
  return afterWait(ctx, account, await holdForAccount(ctx, account.id, bound ? 'blip' : 'same_account_retry', until));
}
