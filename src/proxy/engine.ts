/**
 * The router engine: the request pipeline the CLI and the extension both
 * host. One request reads top to bottom as named steps —
 * authenticate → read body → identify session → plan → attempt → relay → record —
 * and every request reads one immutable configuration snapshot.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { AccountInfo } from '../accounts/types';
import type { TokenManager } from '../accounts/tokenManager';
import { modelFamily } from '../quota/family';
import { computeMetrics, type AccountMetrics, type MetricsParams } from '../routing/metrics';
import { isEligible, planRoute, type PlanAccount, type RoutePlan } from '../routing/plan';
import type { RoutingPolicy } from '../routing/policy';
import { buildDecisionRecord, type DecisionRecord } from '../routing/decision';
import { sendAnthropicError } from './relay/anthropicError';
import { ACCOUNT_HEADER, REQUEST_ID_HEADER, runAttempts, type AttemptOutcome, type AttemptServices } from './pipeline/attempt';
import { BodyTooLargeError, MAX_BODY_BYTES, readBody, type RequestBody } from './http/body';
import type { DecisionSink } from './state/decisionLog';
import { noUsableAccountAnswer } from './pipeline/noUsableAccount';
import { checkClientKey, checkOrigin } from './http/guard';
import { readClientHead, type ClientHead } from './http/clientHead';
import type { Logger } from './log';
import { inspectRequest, MalformedBodyError, type RequestInfo } from './http/requestInfo';
import type { RouterState } from './state/routerState';
import { buildStatus, type StatusReport } from './status/status';
import { createUpstreamAgent } from './upstream/agent';
import { ClientLink } from './upstream/call';

/** The configuration a request runs under. Immutable; replaced whole on reload. */
export interface RuntimeConfig {
  policy: Readonly<RoutingPolicy>;
  /** Every account in configured order, enabled or not. */
  accounts: readonly AccountInfo[];
  /** e.g. `https://api.anthropic.com` (no trailing slash). */
  upstreamBaseUrl: string;
}

/** Where the running configuration came from and how its last reload went. */
export interface ConfigStatus {
  generation: number;
  loadedAtMs: number;
  lastReloadError: string | null;
  lastReloadErrorAtMs: number | null;
  /** Where each effective routing value came from (`default`, `settings`, a file path). */
  sources: Record<string, string>;
}

export interface EngineOptions {
  config: RuntimeConfig;
  state: RouterState;
  tokens: TokenManager;
  decisions: DecisionSink;
  log: Logger;
  /** The local client key every request must carry. */
  clientKey: string;
  now?: () => number;
  dispatcher?: Dispatcher;
  sources?: Record<string, string>;
}

type Route = 'messages' | 'count_tokens' | 'models';

export class RouterEngine {
  private current: RuntimeConfig;
  readonly configStatus: ConfigStatus;
  readonly state: RouterState;
  private readonly tokens: TokenManager;
  private readonly decisions: DecisionSink;
  private readonly log: Logger;
  private key: string;
  private readonly now: () => number;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly loggedPolicyErrors = new Set<string>();
  private readonly startedAtMs: number;
  private readonly liveStreams = new Set<ServerResponse>();
  private readonly services = new WeakMap<RuntimeConfig, AttemptServices>();
  /** Request ids: a random per-process prefix and a counter (unique without a random draw per request). */
  private readonly idPrefix = randomBytes(6).toString('base64url');
  private requestCounter = 0;

  constructor(opts: EngineOptions) {
    this.current = opts.config;
    this.state = opts.state;
    this.tokens = opts.tokens;
    this.decisions = opts.decisions;
    this.log = opts.log;
    this.key = opts.clientKey;
    this.now = opts.now ?? Date.now;
    this.ownsDispatcher = !opts.dispatcher;
    this.dispatcher = opts.dispatcher ?? createUpstreamAgent();
    this.startedAtMs = this.now();
    this.configStatus = { generation: 1, loadedAtMs: this.now(), lastReloadError: null, lastReloadErrorAtMs: null, sources: opts.sources ?? {} };
    this.state.affinity.setIdleTtl(opts.config.policy.sessionAffinityIdleTtlMs);
  }

  /** The configuration new requests will use. */
  get config(): RuntimeConfig {
    return this.current;
  }

  /**
   * Installs a new configuration generation. Requests already running keep
   * theirs. Switching affinity off clears the binding store; switching it on
   * starts empty (routing-semantics.md "Store").
   */
  applyConfig(next: RuntimeConfig, sources?: Record<string, string>): void {
    const prev = this.current.policy;
    if (prev.sessionAffinity !== next.policy.sessionAffinity) this.state.affinity.clear();
    this.state.affinity.setIdleTtl(next.policy.sessionAffinityIdleTtlMs);
    const known = new Set(next.accounts.map((a) => a.label));
    for (const a of this.current.accounts) if (!known.has(a.label)) this.state.forgetAccount(a.label);
    this.current = next;
    this.configStatus.generation++;
    this.configStatus.loadedAtMs = this.now();
    this.configStatus.lastReloadError = null;
    this.configStatus.lastReloadErrorAtMs = null;
    if (sources) this.configStatus.sources = sources;
    this.tokens.invalidate();
    this.state.changed();
    this.log.info(`config: generation ${this.configStatus.generation} active`);
    const primary = next.policy.primaryAccount;
    if (primary !== undefined && !known.has(primary)) this.log.warn(`config: primary-account "${primary}" names no account; it has no effect`);
  }

  /** The local client key requests must carry. */
  get clientKey(): string {
    return this.key;
  }

  /** Replaces the local client key (a rotation); requests with the old key are refused from now on. */
  setClientKey(key: string): void {
    this.key = key;
  }

  /** Records a rejected reload; the running configuration stays. */
  reportReloadError(message: string): void {
    this.configStatus.lastReloadError = message;
    this.configStatus.lastReloadErrorAtMs = this.now();
    this.state.changed();
    this.log.error(`config: reload rejected, keeping generation ${this.configStatus.generation}: ${message}`);
  }

  /** The `node:http` request handler. Never throws. */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    this.running++;
    let forwarded: Promise<void> | void = undefined;
    try {
      forwarded = this.dispatch(req, res);
    } catch (err) {
      this.failed(err, res);
    }
    // One derived promise per request: this runs on every request, and each hop is a microtask.
    if (!forwarded) return this.handled();
    forwarded.then(this.handled, (err: unknown) => {
      this.failed(err, res);
      this.handled();
    });
  };

  /** Requests being handled, and who waits for them all to end (close). */
  private running = 0;
  private onIdle: (() => void) | undefined;
  private readonly handled = (): void => {
    if (--this.running === 0) this.onIdle?.();
  };

  /** An error no step handled: logged, and the client answered (or cut off when its answer had begun). */
  private failed(err: unknown, res: ServerResponse): void {
    this.state.counters.errors++;
    this.log.error(`internal error: ${(err as Error)?.stack ?? String(err)}`);
    if (!res.headersSent) sendAnthropicError(res, 500, 'api_error', 'Claude Router internal error; see its log.');
    else if (!res.writableEnded) res.destroy();
  }

  /** Answers locally at once, or returns the forwarded request's promise. */
  private dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> | void {
    const head = readClientHead(req.rawHeaders);
    const origin = checkOrigin(head);
    if (origin) return sendAnthropicError(res, 403, 'permission_error', origin);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);

    if (path === '/health' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"status":"ok"}');
      return;
    }
    if (path === '/api/hello' && req.method === 'HEAD') {
      res.writeHead(200);
      res.end();
      return;
    }
    if (!checkClientKey(head, this.key)) {
      req.resume();
      return sendAnthropicError(res, 401, 'authentication_error', 'Claude Router: missing or wrong local client key.');
    }
    if (path === '/status' && req.method === 'GET') return sendJson(res, this.status());
    if (path === '/decisions' && req.method === 'GET') {
      const limit = Math.min(500, Math.max(1, Number(new URLSearchParams(url.slice(path.length + 1)).get('limit')) || 50));
      return sendJson(res, this.decisions.recent(limit));
    }
    if (path === '/events' && req.method === 'GET') return this.streamChanges(res);
    const route: Route | undefined =
      path === '/v1/messages' && req.method === 'POST'
        ? 'messages'
        : path === '/v1/messages/count_tokens' && req.method === 'POST'
          ? 'count_tokens'
          : path === '/v1/models' && req.method === 'GET'
            ? 'models'
            : undefined;
    if (!route) {
      req.resume();
      return sendAnthropicError(res, 404, 'not_found_error', `Claude Router does not serve ${req.method} ${path}.`);
    }
    return this.forward(route, req, head, res, url, path);
  }

  private async forward(route: Route, req: IncomingMessage, head: ClientHead, res: ServerResponse, url: string, path: string): Promise<void> {
    const startedAt = this.now();
    const requestId = `req_router_${this.idPrefix}${(++this.requestCounter).toString(36)}`;
    const config = this.current; // one snapshot for this request's whole life

    let body: RequestBody;
    try {
      const declared = Number(head.contentLength);
      if (head.expect !== undefined && /100-continue/i.test(head.expect) && !(declared > MAX_BODY_BYTES)) res.writeContinue();
      body = await readBody(req, declared, MAX_BODY_BYTES);
    } catch (err) {
      if (err instanceof BodyTooLargeError) {
        return sendAnthropicError(res, 413, 'request_too_large', `Request exceeds the maximum allowed size of ${MAX_BODY_BYTES} bytes.`);
      }
      return; // the client went away while sending
    }

    let info: RequestInfo = { model: null, sessionId: null, stream: null };
    if (route !== 'models') {
      try {
        info = inspectRequest(head.sessionId, body);
      } catch (err) {
        if (err instanceof MalformedBodyError) return sendAnthropicError(res, 400, 'invalid_request_error', err.message);
        throw err;
      }
    }

    const client = new ClientLink();
    const onClose = () => {
      if (!res.writableFinished) client.markGone();
    };
    res.on('close', onClose);

    const now = this.now();
    const isMessages = route === 'messages';
    const plan = this.plan(config, info, now, isMessages);
    if (plan.policyError) this.logPolicyError(plan.policyError);
    if (isMessages) {
      this.state.counters.requests++;
      this.state.roundRobinCursor++;
    }

    let result: AttemptOutcome;
    try {
      result = await runAttempts(
        {
          req,
          head,
          res,
          body,
          pathWithQuery: url,
          model: info.model,
          order: plan.order,
          accounts: accountsByLabel(config),
          policy: config.policy,
          forMessages: isMessages,
          requestId,
          client,
          onCommit: (account, attempted) => {
            if (isMessages) this.bindOnCommit(config.policy, info.sessionId, account, attempted, info.model);
          },
        },
        this.servicesFor(config),
      );
    } catch (err) {
      // Answered here, where the request id is known; the caller logs it.
      sendAnthropicError(res, 500, 'api_error', 'Claude Router internal error; see its log.', { [REQUEST_ID_HEADER]: requestId });
      throw err;
    } finally {
      res.off('close', onClose);
    }

    let { outcome, status } = result;
    if (outcome === 'exhausted') {
      outcome = 'no_usable_account';
      this.state.counters.noUsableAccount++;
      status = this.answerNoUsableAccount(config, res, requestId, info.model, result.cappedOut === true);
    }
    if (outcome === 'success') this.state.counters.served++;
    if (outcome === 'client_abort') this.state.counters.clientAborts++;
    this.state.changed();

    const record = buildDecisionRecord(
      { ts: new Date(startedAt).toISOString(), requestId, sessionId: info.sessionId, path, model: info.model, stream: info.stream ?? result.streamed },
      plan,
      config.policy,
      {
        servedBy: result.servedBy?.id ?? null,
        servedByFallback: result.servedBy?.fallback ?? false,
        attempts: result.attempts,
        outcome: outcome as DecisionRecord['outcome'],
        status,
        usage: result.usage,
        durationMs: this.now() - startedAt,
      },
    );
    this.decisions.append(record);
    if (this.log.debugEnabled?.() ?? true) {
      this.log.debug(`decision ${requestId} session=${info.sessionId ?? '-'} reason=${plan.selectionReason} served=${record.servedBy ?? '-'} outcome=${outcome}`);
    }
  }

  /** The services the attempt loop uses under `config` (built once per configuration). */
  private servicesFor(config: RuntimeConfig): AttemptServices {
    let services = this.services.get(config);
    if (!services) {
      services = {
        state: this.state,
        tokens: this.tokens,
        dispatcher: this.dispatcher,
        upstreamOrigin: config.upstreamBaseUrl,
        log: this.log,
        now: this.now,
        usableNow: (label, model) => this.usableNow(config, label, model),
        // The live configuration: a reload may remove an account while a request runs.
        known: (label) => accountsByLabel(this.current).has(label),
      };
      this.services.set(config, services);
    }
    return services;
  }

  /** Plans a request under `config` at `now`. */
  private plan(config: RuntimeConfig, info: RequestInfo, now: number, isMessages: boolean): RoutePlan {
    const { policy } = config;
    const params = metricsParams(policy, info.model);
    const accounts: PlanAccount[] = [];
    for (let index = 0; index < config.accounts.length; index++) {
      const a = config.accounts[index];
      if (!a.enabled) continue;
      accounts.push({
        id: a.label,
        index,
        isPrimary: policy.primaryAccount === a.label,
        fallback: a.fallback,
        inflight: a.fallback ? 0 : this.state.leases.inflight(a.label),
        metrics: this.accountMetrics(a.label, params, now),
      });
    }
    const useAffinity = isMessages && policy.sessionAffinity && policy.strategy === 'fill-first';
    const binding = useAffinity && info.sessionId ? this.state.affinity.get(info.sessionId, now) : undefined;
    return planRoute({
      accounts,
      policy: isMessages ? policy : { ...policy, spillInflight: 0 },
      sessionId: info.sessionId,
      binding,
      roundRobinCursor: this.state.roundRobinCursor,
    });
  }

  /**
   * Metrics of every configured account for a request of `model` at `now`
   * (the same numbers the planner, `/status` and the VS Code views use).
   */
  metricsFor(config: RuntimeConfig, model: string | null, now: number): Map<string, AccountMetrics> {
    const params = metricsParams(config.policy, model);
    return new Map(config.accounts.map((a) => [a.label, this.accountMetrics(a.label, params, now)]));
  }

  private accountMetrics(label: string, params: MetricsParams, now: number): AccountMetrics {
    const s = this.state;
    return computeMetrics({ snapshot: s.snapshots.get(label), cooldown: s.cooldowns.get(label), needsSignIn: s.needsSignIn.has(label) }, params, now);
  }

  private usableNow(config: RuntimeConfig, label: string, model: string | null): boolean {
    return this.accountMetrics(label, metricsParams(config.policy, model), this.now()).usable;
  }

  /**
   * Binds the session to the account that served it — unless the session's
   * bound account was never attempted and is still eligible (the request only
   * overflowed a cap), in which case the old binding stays. Fallbacks never bind.
   */
  private bindOnCommit(policy: RoutingPolicy, sessionId: string | null, served: PlanAccount, attempted: ReadonlySet<string>, model: string | null): void {
    if (!sessionId || served.fallback || !policy.sessionAffinity || policy.strategy !== 'fill-first') return;
    // A reload may have switched affinity off (clearing the store) or removed the account
    // while this request ran: then it must not bind.
    const live = this.current;
    if (!live.policy.sessionAffinity || live.policy.strategy !== 'fill-first' || !live.accounts.some((a) => a.label === served.id)) return;
    const now = this.now();
    const bound = this.state.affinity.get(sessionId, now);
    if (bound && bound.account !== served.id && !attempted.has(bound.account)) {
      if (isEligible(this.accountMetrics(bound.account, metricsParams(policy, model), now))) {
        this.state.affinity.bind(sessionId, bound.account, now);
        return;
      }
    }
    this.state.affinity.bind(sessionId, served.id, now);
  }

  /** Answers "no usable account" (429, or 401 / 529 / 503 when that is what blocks the pool); returns the status, for the decision record. */
  private answerNoUsableAccount(config: RuntimeConfig, res: ServerResponse, requestId: string, model: string | null, cappedOut: boolean): number {
    if (res.destroyed) return 499; // the client left while the attempts ran
    if (res.headersSent) return 429;
    const now = this.now();
    if (cappedOut) {
      sendAnthropicError(res, 429, 'rate_limit_error', 'Claude Router: every usable account is at its max-inflight-per-account limit.', {
        'retry-after': '1',
        [REQUEST_ID_HEADER]: requestId,
      });
      return 429;
    }
    const metrics = this.metricsFor(config, model, now);
    const answer = noUsableAccountAnswer(
      config.accounts
        .filter((a) => a.enabled)
        .map((a) => ({ label: a.label, metrics: metrics.get(a.label)!, cooldown: this.state.cooldowns.get(a.label), snapshot: this.state.snapshots.get(a.label) })),
      now,
    );
    this.log.warn(answer.message);
    const headers: Record<string, string> = { ...answer.windowHeaders, [REQUEST_ID_HEADER]: requestId };
    if (answer.retryAfterS !== undefined) headers['retry-after'] = String(answer.retryAfterS);
    sendAnthropicError(res, answer.status, answer.type, answer.message, headers);
    return answer.status;
  }

  private logPolicyError(signature: string): void {
    if (this.loggedPolicyErrors.has(signature)) return;
    this.loggedPolicyErrors.add(signature);
    this.log.error(`routing policy failed, using expiry-first: ${signature}`);
  }

  /** The `/status` report (no secrets). */
  status(): StatusReport {
    const now = this.now();
    const plan = this.plan(this.current, { model: null, sessionId: null, stream: null }, now, true);
    return buildStatus({
      config: this.current,
      configStatus: this.configStatus,
      state: this.state,
      metrics: this.metricsFor(this.current, null, now),
      now,
      startedAtMs: this.startedAtMs,
      preview: { selectionReason: plan.selectionReason, verdicts: plan.verdicts },
    });
  }

  /**
   * `GET /events`: an SSE stream with one `event: changed` whenever the state
   * changes (at most every 250 ms). Other VS Code windows follow the leading
   * proxy through it instead of polling, and see it go away when it closes.
   */
  private streamChanges(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    res.write('event: changed\ndata: {}\n\n');
    let timer: NodeJS.Timeout | undefined;
    const onChange = () => {
      timer ??= setTimeout(() => {
        timer = undefined;
        res.write('event: changed\ndata: {}\n\n');
      }, 250);
    };
    this.state.events.on('changed', onChange);
    this.liveStreams.add(res);
    res.on('close', () => {
      if (timer) clearTimeout(timer);
      this.state.events.off('changed', onChange);
      this.liveStreams.delete(res);
    });
  }

  /** The most recent decision records, newest last. */
  recentDecisions(limit: number): DecisionRecord[] {
    return this.decisions.recent(limit);
  }

  /**
   * Ends `/events` streams and waits (at most `graceMs`) for requests still being handled —
   * their decisions are recorded as they end, so close the decision log after this. Close
   * the HTTP server first: its connections are what ends those requests.
   */
  async close(graceMs = 5_000): Promise<void> {
    for (const res of this.liveStreams) res.end();
    if (this.running > 0) {
      await new Promise<void>((resolve) => {
        this.onIdle = resolve;
        setTimeout(resolve, graceMs).unref();
      });
    }
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}

/** Accounts by label, per configuration (built once: a configuration never changes). */
const accountMaps = new WeakMap<RuntimeConfig, ReadonlyMap<string, AccountInfo>>();
function accountsByLabel(config: RuntimeConfig): ReadonlyMap<string, AccountInfo> {
  let map = accountMaps.get(config);
  if (!map) accountMaps.set(config, (map = new Map(config.accounts.map((a) => [a.label, a]))));
  return map;
}

function sendJson(res: ServerResponse, value: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(value));
}

function metricsParams(policy: RoutingPolicy, model: string | null): MetricsParams {
  return {
    sessionSoftLimit: policy.sessionSoftLimit,
    sessionResetToleranceMs: policy.sessionResetToleranceMs,
    allowOverage: policy.allowOverage,
    modelFamily: modelFamily(model ?? undefined),
  };
}

export { ACCOUNT_HEADER };
