/**
 * Step 3: the request body, read whole (failover resends it), with
 * `100 Continue` sent first when the client waits for it; a body over the
 * limit is refused with 413.
 */
import { BodyTooLargeError, MAX_BODY_BYTES, readBody } from '../http/body';
import { sendAnthropicError, sendContinue } from '../relay/clientAnswer';
import type { RequestContext } from './context';

/** Resolves true when the request ended here (413, or the client went away while sending). */
export function readRequestBody(ctx: RequestContext): Promise<boolean> {
  const { head, res } = ctx;
  const declared = Number(head.contentLength);
  if (head.expect !== undefined && /100-continue/i.test(head.expect) && !(declared > MAX_BODY_BYTES)) sendContinue(res);
  // One derived promise, no async wrapper: every forwarded request passes here.
  return readBody(ctx.req, declared, MAX_BODY_BYTES).then(
    (body) => {
      ctx.body = body;
      return false;
    },
    (err: unknown) => {
      if (err instanceof BodyTooLargeError) {
        sendAnthropicError(res, 413, 'request_too_large', `Request exceeds the maximum allowed size of ${MAX_BODY_BYTES} bytes.`);
      }
      return true;
    },
  );
}
