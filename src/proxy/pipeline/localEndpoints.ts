/**
 * The router's own endpoints. Open (no client key, for health checks and
 * Claude Code's start-up probe): `GET /health`, `HEAD /api/hello`, and
 * `GET /identity?nonce=…` (proof that this is the router, see identity.ts). With the
 * key: `GET /status[?model=<id>]` (the report, no secrets), `GET /decisions` (decision records from
 * the log on disk, filtered and paged: decisionQuery.ts), `GET /estimation` (cost leases: the output
 * estimate per model, the reservations per account), `GET /preview` (how a new
 * request would be routed now), `GET /history?range=hour|day|week` (each account's utilisation,
 * requests and tokens over time: usageHistory.ts), `GET /events` (a change stream) and
 * `POST /accounts/<label>/reset-cooldown` (a person's "Reset Cooldown").
 */
import { isoTime } from '../../quota/time';
import type { ServerResponse } from 'node:http';
import { endChangeStream, openChangeStream, sendAnthropicError, sendChanged, sendJson, sendOk } from '../relay/clientAnswer';
import type { RequestContext, RouterServices } from './context';
import { metricsFor, metricsParams } from './eligibility';
import { planFor } from './plan';
import { buildEstimation } from '../status/estimation';
import { buildStatus, type PreviewReport, type StatusReport } from '../status/status';
import { parseDecisionQuery } from '../state/decisionQuery';
import { HISTORY_RANGES, type HistoryRange } from '../state/usageHistory';
import { isStickyKeyHash } from '../../routing/identify';
import { modelFamily } from '../../quota/family';
import type { RuntimeConfig } from '../runtimeConfig';
import { answerIdentity, endsAtRouter, IDENTITY_PATH } from '../http/identity';

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
  else if (ctx.req.method === 'POST' && RESET_COOLDOWN_PATH.test(path)) answerResetCooldown(ctx);
  else if (ctx.req.method !== 'GET') return false;
  else if (path === '/status') sendJson(res, routerStatus(ctx.services, statusModel(ctx.url.slice(path.length + 1))));
  else if (path === '/decisions') serveDecisions(ctx);
  else if (path === '/estimation') sendJson(res, buildEstimation(ctx.services.state, ctx.services.live.config));
  else if (path === '/preview') servePreview(ctx);
  else if (path === '/history') serveHistory(ctx);
  else if (path === '/events') streamChanges(ctx.services, res);
  else return false;
  return true;
}

/** `/accounts/<label, URL-encoded>/reset-cooldown`. */
const RESET_COOLDOWN_PATH = /^\/accounts\/([^/]+)\/reset-cooldown$/;

/** What a reset lifted (labels and reasons only), as `POST /accounts/<label>/reset-cooldown` answers it. */
export interface ResetCooldownAnswer {
  account: string;
  /** The reason of the account-wide cooldown that was running (`window_exhausted`, `throttle`, …), or null. */
  cooldown: string | null;
  /** When it would have ended, ISO-8601, or null. */
  cooldownUntil: string | null;
  /** Model families whose scoped cooldown was running. */
  scopedFamilies: string[];
  /** Quota evidence showing a rejected window was dropped; fresh evidence is read again. */
  droppedEvidence: boolean;
}

/**
 * A person's "Reset Cooldown" of `label` (RouterState.resetCooldown), logged; undefined when no
 * configured account has that label. The extension's leading window calls it directly, the CLI
 * and following windows through `POST /accounts/<label>/reset-cooldown`.
 */
export function resetAccountCooldown(s: RouterServices, label: string): ResetCooldownAnswer | undefined {
  if (!s.live.accountsByLabel.has(label)) return undefined;
  const r = s.state.resetCooldown(label);
  const until = r.cooldown && r.cooldown.untilMs > s.now() ? isoTime(r.cooldown.untilMs) : null;
  s.log.info(
    `cooldown ${label}: reset by the user${r.cooldown ? ` (was ${r.cooldown.reason}${until ? ` until ${until}` : ''})` : ''}${r.scopedFamilies.length ? `; model-scoped: ${r.scopedFamilies.join(', ')}` : ''}`,
  );
  return { account: label, cooldown: until ? r.cooldown!.reason : null, cooldownUntil: until, scopedFamilies: r.scopedFamilies, droppedEvidence: r.droppedEvidence };
}

/** `POST /accounts/<label>/reset-cooldown`: 200 with what was lifted, 404 for an unknown label, 400 for a body (it takes none). */
function answerResetCooldown(ctx: RequestContext): void {
  const { req, res } = ctx;
  const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
  if (hasBody) return sendAnthropicError(res, 400, 'invalid_request_error', 'Claude Router: reset-cooldown takes no body.', { connection: 'close' });
  let label: string;
  try {
    label = decodeURIComponent(RESET_COOLDOWN_PATH.exec(ctx.path)![1]);
  } catch {
    return sendAnthropicError(res, 400, 'invalid_request_error', 'Claude Router: the account label in the path is not valid URL encoding.');
  }
  const answer = resetAccountCooldown(ctx.services, label);
  if (!answer) return sendAnthropicError(res, 404, 'not_found_error', `Claude Router: no account is named ${JSON.stringify(label)}.`);
  sendJson(res, answer);
}

/**
 * `GET /identity?nonce=<64 hex>`: the proof for both ends of this connection, or 400
 * (a bad nonce, or a request with a body: it takes none, and none is read).
 */
function proveIdentity(ctx: RequestContext): void {
  const { req, res } = ctx;
  const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
  const answer = hasBody
    ? { ok: false as const, message: 'Claude Router: /identity takes no body.' }
    : answerIdentity(ctx.url.slice(ctx.path.length + 1), ctx.services.clientKey, endsAtRouter(req.socket));
  // An unread body ends with the connection.
  if (!answer.ok) sendAnthropicError(res, 400, 'invalid_request_error', answer.message, hasBody ? { connection: 'close' } : {});
  else sendOk(res, answer.json);
}

/** `GET /history?range=hour|day|week` (default hour): each account's points over the range, as a JSON array (UsageSeries); 400 for another range. */
function serveHistory(ctx: RequestContext): void {
  const range = new URLSearchParams(ctx.url.slice(ctx.path.length + 1)).get('range') ?? 'hour';
  if (!HISTORY_RANGES.includes(range as HistoryRange)) {
    return sendAnthropicError(ctx.res, 400, 'invalid_request_error', `Claude Router: /history range: expected one of ${HISTORY_RANGES.join(', ')}.`);
  }
  sendJson(ctx.res, ctx.services.state.history.series(range as HistoryRange, ctx.services.now()));
}

/**
 * `GET /decisions?limit=&session=&account=&outcome=&reason=&since=&until=&request=&before=`: the newest matching
 * decision records, oldest first, as a JSON array; when older ones may match, a
 * `link: </decisions?…&before=<cursor>>; rel="next"` header names the next page. A bad parameter
 * gets 400 naming it; a log that cannot be read, 500.
 */
function serveDecisions(ctx: RequestContext): void {
  const { res, services } = ctx;
  const query = ctx.url.slice(ctx.path.length + 1);
  const q = parseDecisionQuery(query);
  if ('error' in q) return sendAnthropicError(res, 400, 'invalid_request_error', `Claude Router: /decisions ${q.error}.`);
  services.decisions.query(q).then(
    (page) => {
      const rest = new URLSearchParams(query);
      rest.delete('before');
      if (page.next) rest.set('before', page.next);
      sendJson(res, page.records, page.next ? { link: `</decisions?${rest.toString()}>; rel="next"` } : {});
    },
    (err: Error) => {
      services.log.warn(`decision log: ${err.message}`);
      sendAnthropicError(res, 500, 'api_error', 'Claude Router: the decision log cannot be read.');
    },
  );
}

/**
 * `GET /preview?model=M&session=H`: how a new request for model M (of session H, a sticky-key
 * hash) would be routed now — the selection reason and each account's verdict (PreviewReport).
 */
function servePreview(ctx: RequestContext): void {
  const p = new URLSearchParams(ctx.url.slice(ctx.path.length + 1));
  const session = p.get('session');
  if (session !== null && !isStickyKeyHash(session))
    return sendAnthropicError(ctx.res, 400, 'invalid_request_error', 'Claude Router: /preview session: expected a 16-hex session key hash.');
  sendJson(ctx.res, preview(ctx.services, p.get('model'), session));
}

/** How a new Messages request for `model` (of the session with hash `session`) would be routed now. */
function preview(s: RouterServices, model: string | null, session: string | null): PreviewReport {
  const config = s.live.config;
  const plan = planFor(s.state, config, metricsParams(config.policy, model), session, s.now(), true);
  return { selectionReason: plan.selectionReason, verdicts: plan.verdicts };
}

/**
 * Where a new session of each other model family with a model-scoped window would go, for the
 * families whose answer differs from `main`'s (a limit on one family can send its requests
 * elsewhere): family → preview. Empty when no account reports a scoped window.
 */
function familyPreviews(s: RouterServices, config: RuntimeConfig, model: string | null, main: PreviewReport): Record<string, PreviewReport> {
  const families = new Set<string>();
  for (const a of config.accounts) for (const f of Object.keys(s.state.snapshots.get(a.label)?.scoped ?? {})) families.add(f);
  families.delete(modelFamily(model ?? undefined) ?? '');
  const out: Record<string, PreviewReport> = {};
  const first = (p: PreviewReport) => p.verdicts.find((v) => v.verdict === 'selected')?.account;
  for (const family of [...families].sort()) {
    // A model id of the family: the planner reads only its family (quota/family.ts).
    const p = preview(s, `claude-${family}`, null);
    if (first(p) !== first(main)) out[family] = p;
  }
  return out;
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
  const main = preview(s, model, null);
  return buildStatus({
    config,
    configStatus: s.configStatus,
    state: s.state,
    metrics: metricsFor(s.state, config, model, now),
    now,
    startedAtMs: s.startedAtMs,
    preview: main,
    familyPreviews: familyPreviews(s, config, model, main),
    waiting: { requests: s.waitingRoom.heldRequests, bodyBytes: s.waitingRoom.heldBodyBytes },
    queued: (queue) => s.waitingRoom.waiting(queue),
    store: s.storeStatus?.(),
    grantedAt: (label) => s.tokens.grantedAt(label),
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

/** Ends every open `/events` stream: the router is closing, or (`rotated`) the key they were opened with was replaced. */
export function endChangeStreams(s: RouterServices, rotated = false): void {
  for (const res of s.changeStreams) endChangeStream(res, rotated);
}
