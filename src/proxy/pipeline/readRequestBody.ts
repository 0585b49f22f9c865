/**
 * Step 3: the request body, read whole (failover resends it), with
 * `100 Continue` sent first when the client waits for it; a body over the
 * limit is refused with 413, a body the memory budget has no room for with
 * 503 `overloaded_error` — both before the body is kept. A body that will be parsed whole (no
 * session header: identifySession.ts) counts its parse too from its head on.
 */
import { BodyBudgetError, BodyTooLargeError, MAX_BODY_BYTES, readBody } from '../http/body';
import { parseRoomFor } from '../http/requestInfo';
import { sendAnthropicError, sendContinue } from '../relay/clientAnswer';
import type { RequestContext } from './context';
import { clientRetry } from '../../routing/clientRetry';

/** How long a client refused by the memory budget is asked to wait, ms (held bodies go at their answer's first byte). */
const BUDGET_RETRY_MS = 2_000;

/** Resolves true when the request ended here (413, 503, or the client went away while sending). */
export function readRequestBody(ctx: RequestContext): Promise<boolean> {
  const { head, res } = ctx;
  const { bodyBudget } = ctx.services;
  const budgetLimit = ctx.generation.config.policy.maxBufferedBodyBytes;
  const declared = Number(head.contentLength);
  // Without a session header the body is parsed whole: its parse is counted with it (Claude Code sends the header).
  const parseRoom = head.sessionId === undefined && declared > 0 ? parseRoomFor(declared, budgetLimit) : 0;
  if (head.expect !== undefined && /100-continue/i.test(head.expect) && !(declared > MAX_BODY_BYTES) && !(declared > 0 && !bodyBudget.fits(declared + parseRoom, budgetLimit))) {
    sendContinue(res);
  }
  // One derived promise, no async wrapper: every forwarded request passes here.
  return readBody(ctx.req, declared, bodyBudget, budgetLimit, parseRoom).then(
    (body) => {
      ctx.body = body;
      return false;
    },
    (err: unknown) => {
      if (err instanceof BodyTooLargeError) {
        sendAnthropicError(res, 413, 'request_too_large', `Request exceeds the maximum allowed size of ${MAX_BODY_BYTES} bytes.`);
      } else if (err instanceof BodyBudgetError) {
        refuseForBudget(ctx);
      }
      return true;
    },
  );
}

/** Answers a request the body budget has no room for: 503 `overloaded_error` with `retry-after`, logged. */
export function refuseForBudget(ctx: RequestContext): void {
  const { bodyBudget, log } = ctx.services;
  const budgetLimit = ctx.generation.config.policy.maxBufferedBodyBytes;
  const message = `Claude Router is holding ${bodyBudget.heldBytes} bytes of request bodies, near its limit of ${budgetLimit} (routing.max-buffered-body-bytes); retry shortly.`;
  log.warn(`request refused: ${message}`);
  const { retryAfterS } = clientRetry(BUDGET_RETRY_MS, ctx.generation.config.policy.clientRetryHorizonMs);
  sendAnthropicError(ctx.res, 503, 'overloaded_error', message, { 'retry-after': String(retryAfterS) });
}
