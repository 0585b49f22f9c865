/**
 * The router's own endpoints. Open (no client key, for health checks and
 * Claude Code's start-up probe): `GET /health`, `HEAD /api/hello`, and
 * `GET /identity?nonce=…` (proof that this is the router, see identity.ts). With the
 * key: `GET /status[?model=<id>]` (the report, no secrets), `GET /decisions?limit=N` (the
 * latest decision records) and `GET /events` (a change stream).
 */
import type { ServerResponse } from 'node:http';
import { endChangeStream, openChangeStream, sendAnthropicError, sendChanged, sendJson, sendOk } from '../relay/clientAnswer';
import type { RequestContext, RouterServices } from '../pipeline/context';
import { metricsFor, metricsParams } from '../pipeline/eligibility';
import { planFor } from '../pipeline/plan';
import { buildStatus, type StatusReport } from '../status/status';
import { answerIdentity, IDENTITY_PATH } from './identity';

/** Whether the request is for an endpoint open without the client key. */
export function isOpenEndpoint(ctx: RequestContext): boolean {
  const { path } = ctx;
  const method = ctx.req.method;
  return (path === '/health' && method === 'GET') || (path === '/api/hello' && method === 'HEAD') || (path === IDENTITY_PATH && method === 'GET');
}

/** Answers the request when it is for a local endpoint; false when it is not one. */
export function serveLocal(ctx: RequestContext): boolean {
  const { path, res } = ctx;
  if (path === IDENTITY_PATH && ctx.req.method === 'GET') proveIdentity(ctx);
  else if (isOpenEndpoint(ctx)) sendOk(res, path === '/health' ? '{"status":"ok"}' : undefined);
  else if (ctx.req.method !== 'GET') return false;
  else if (path === '/status') sendJson(res, routerStatus(ctx.services, statusModel(ctx.url.slice(path.length + 1))));
  else if (path === '/decisions') {
    const limit = Math.min(500, Math.max(1, Number(new URLSearchParams(ctx.url.slice(path.length + 1)).get('limit')) || 50));
    sendJson(res, ctx.services.decisions.recent(limit));
  } else if (path === '/events') streamChanges(ctx.services, res);
  else return false;
  return true;
}

/**
 * `GET /identity?nonce=<64 hex>`: the proof for the port this connection came in on, or 400
 * (a bad nonce, or a request with a body: it takes none, and none is read).
 */
function proveIdentity(ctx: RequestContext): void {
  const { req, res } = ctx;
  const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
  const answer = hasBody
    ? { ok: false as const, message: 'Claude Router: /identity takes no body.' }
    : answerIdentity(ctx.url.slice(ctx.path.length + 1), ctx.services.clientKey, req.socket.localPort ?? 0);
  // An unread body ends with the connection.
  if (!answer.ok) sendAnthropicError(res, 400, 'invalid_request_error', answer.message, hasBody ? { connection: 'close' } : {});
  else sendOk(res, answer.json);
}

/** `?model=<id>` of a `/status` query (at most 200 characters, like the decision record's `model`), or null. */
function statusModel(query: string): string | null {
  const model = new URLSearchParams(query).get('model');
  return model ? model.slice(0, 200) : null;
}

/**
 * The `/status` report (labels and numbers, no secrets), with a preview of how a new, unbound
 * request would be routed — for a request of `model` when given (`GET /status?model=<id>`: its
 * family's model-scoped windows then count for eligibility and the preview), else a model-less one.
 */
export function routerStatus(s: RouterServices, model: string | null = null): StatusReport {
  const now = s.now();
  const config = s.live.config;
  const plan = planFor(s.state, config, metricsParams(config.policy, model), null, now, true);
  return buildStatus({
    config,
    configStatus: s.configStatus,
    state: s.state,
    metrics: metricsFor(s.state, config, model, now),
    now,
    startedAtMs: s.startedAtMs,
    preview: { selectionReason: plan.selectionReason, verdicts: plan.verdicts },
  });
}

/**
 * `GET /events`: an SSE stream with one `event: changed` whenever the state
 * changes (at most every 250 ms). Other VS Code windows follow the leading
 * proxy through it instead of polling, and see it go away when it closes.
 */
function streamChanges(s: RouterServices, res: ServerResponse): void {
  openChangeStream(res);
  let timer: NodeJS.Timeout | undefined;
  const onChange = () => {
    timer ??= setTimeout(() => {
      timer = undefined;
      sendChanged(res);
    }, 250);
  };
  s.state.events.on('changed', onChange);
  s.changeStreams.add(res);
  res.on('close', () => {
    if (timer) clearTimeout(timer);
    s.state.events.off('changed', onChange);
    s.changeStreams.delete(res);
  });
}

/** Ends every open `/events` stream (the router is closing). */
export function endChangeStreams(s: RouterServices): void {
  for (const res of s.changeStreams) endChangeStream(res);
}
