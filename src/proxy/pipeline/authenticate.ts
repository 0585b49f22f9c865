/**
 * Step 1: only local clients with the client key get in — a browser page's
 * request (Origin, Host) is refused, and so is a request without the key,
 * except for the open health checks.
 */
import { checkClientKey, checkOrigin } from '../http/guard';
import { readClientHead } from '../http/clientHead';
import { isOpenEndpoint } from './localEndpoints';
import { sendAnthropicError } from '../relay/clientAnswer';
import type { RequestContext } from './context';

/** Reads the client's head; true when the request was refused (403, 401). */
export function authenticate(ctx: RequestContext): boolean {
  const head = (ctx.head = readClientHead(ctx.req.rawHeaders));
  const refused = checkOrigin(head);
  if (refused) {
    if (!head.host) sendAnthropicError(ctx.res, 400, 'invalid_request_error', 'Claude Router: the request has no Host header (HTTP/1.1 requires one).');
    else sendAnthropicError(ctx.res, 403, 'permission_error', refused);
    return true;
  }
  if (isOpenEndpoint(ctx) || checkClientKey(head, ctx.services.clientKey)) return false;
  ctx.req.resume();
  sendAnthropicError(ctx.res, 401, 'authentication_error', 'Claude Router: missing or wrong local client key.');
  return true;
}
