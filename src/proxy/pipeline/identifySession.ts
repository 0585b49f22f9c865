/**
 * Step 4: the request's model, sticky key (src/routing/identify.ts: only its hash leaves this
 * step) and stream flag, read from the head and the body (`models` requests carry none); a
 * body that had to be parsed and is not a JSON object is refused with 400.
 */
import { inspectRequest, MalformedBodyError } from '../http/requestInfo';
import { sendAnthropicError } from '../relay/clientAnswer';
import type { RequestContext } from './context';

/** True when the body was refused (400). */
export function identifySession(ctx: RequestContext): boolean {
  if (ctx.route === 'models') return false;
  try {
    ctx.info = inspectRequest(ctx.head.sessionId, ctx.body, ctx.generation.config.policy.sessionFingerprint);
    return false;
  } catch (err) {
    if (!(err instanceof MalformedBodyError)) throw err;
    ctx.body.release();
    sendAnthropicError(ctx.res, 400, 'invalid_request_error', err.message);
    return true;
  }
}
