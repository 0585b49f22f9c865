/**
 * Step 7: answers what the attempt loop left unanswered — the upstream error
 * it held, the router's own throttle when usable accounts only lacked room, or
 * "no usable account" (429, or 401 / 529 / 503 when that is what blocks the
 * pool; noUsableAccount.ts words it). Answers the attempts
 * committed are already on their way.
 */
import { REQUEST_ID_HEADER, sendAnthropicError, sendHeld } from '../relay/clientAnswer';
import type { RequestContext } from './context';
import { plannedRecoveryInputs } from './eligibility';
import { noUsableAccountAnswer } from './noUsableAccount';
import { clientRetry } from '../../routing/clientRetry';

/** When an account at its concurrency limit is likely to have room again (a request in flight ends), ms: the busy answer's wait. */
const ROOM_RETRY_MS = 1_000;

/** Writes the held or "no usable account" answer, and sets the outcome's status to the one the client got. */
export function relay(ctx: RequestContext): void {
  const outcome = ctx.outcome;
  if (outcome.held) sendHeld(ctx.res, outcome.held, ctx.requestId);
  else if (outcome.outcome === 'no_usable_account') outcome.status = answerNoUsableAccount(ctx, outcome.cappedOut);
}

/** @returns the status, for the decision record (499 when the client left while the attempts ran) */
function answerNoUsableAccount(ctx: RequestContext, cappedOut: boolean): number {
  const { res, requestId } = ctx;
  if (res.destroyed) return 499;
  if (res.headersSent) return 429;
  if (cappedOut) {
    // Throttle-shaped (no unified headers): Claude Code retries it after `retry-after`.
    const { retryAfterS } = clientRetry(ROOM_RETRY_MS, ctx.generation.config.policy.clientRetryHorizonMs);
    sendAnthropicError(res, 429, 'rate_limit_error', 'Claude Router: every usable account is at its concurrency limit and the request could not wait longer for room.', {
      'retry-after': String(retryAfterS),
      [REQUEST_ID_HEADER]: requestId,
    });
    return 429;
  }
  const { log } = ctx.services;
  const now = ctx.services.now();
  const answer = noUsableAccountAnswer(plannedRecoveryInputs(ctx, now), now, ctx.params.modelFamily, ctx.generation.config.policy.clientRetryHorizonMs);
  log.warn(answer.message);
  const headers: Record<string, string> = { ...answer.windowHeaders, [REQUEST_ID_HEADER]: requestId };
  if (answer.retryAfterS !== undefined) headers['retry-after'] = String(answer.retryAfterS);
  sendAnthropicError(res, answer.status, answer.type, answer.message, headers);
  return answer.status;
}
