/**
 * Step 2: the router's own endpoints are answered here; a request for the
 * Anthropic API it forwards gets its route, its id, its start time and the
 * configuration it runs under; anything else is a 404.
 */
import { serveLocal } from './localEndpoints';
import { sendAnthropicError } from '../relay/clientAnswer';
import { nextRequestId, type RequestContext, type Route } from './context';

/** True when the request was answered here (a local endpoint, or 404). */
export function route(ctx: RequestContext): boolean {
  if (serveLocal(ctx)) return true;
  const { req, path } = ctx;
  const method = req.method;
  const route: Route | undefined =
    path === '/v1/messages' && method === 'POST'
      ? 'messages'
      : path === '/v1/messages/count_tokens' && method === 'POST'
        ? 'count_tokens'
        : path === '/v1/models' && method === 'GET'
          ? 'models'
          : undefined;
  if (!route) {
    req.resume();
    sendAnthropicError(ctx.res, 404, 'not_found_error', `Claude Router does not serve ${method} ${path}.`);
    return true;
  }
  const s = ctx.services;
  ctx.route = route;
  ctx.startedAtMs = s.now();
  ctx.requestId = nextRequestId();
  ctx.generation = s.live; // one snapshot for this request's whole life
  return false;
}
