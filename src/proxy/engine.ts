/**
 * The router engine the CLI and the extension both host: it holds the
 * configuration generations and the client key, and runs each request through
 * the request path's steps, in the order below. Every request reads the one
 * configuration generation it started under.
 */
import type { ResetWindow } from '../routing/probe';
import { warmUp } from './pipeline/warmUp';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { TokenManager } from '../accounts/tokenManager';
import type { AccountMetrics } from '../routing/metrics';
import type { DecisionRecord } from '../routing/decision';
import { BodyBudget, type RequestBody } from './http/body';
import { endChangeStreams, resetAccountCooldown, routerStatus, type ResetCooldownAnswer } from './pipeline/localEndpoints';
import type { Logger } from './log';
import { attempt } from './pipeline/attempt';
import { authenticate } from './pipeline/authenticate';
import { RequestContext, type RouterServices } from './pipeline/context';
import { metricsFor } from './pipeline/eligibility';
import { identifySession } from './pipeline/identifySession';
import { plan } from './pipeline/plan';
import { sharedBinding } from './pipeline/sharedBinding';
import type { SharedState } from './state/sharedState';
import type { StoreStatus } from '../store/connection';
import { readRequestBody } from './pipeline/readRequestBody';
import { record } from './pipeline/record';
import { relay } from './pipeline/relay';
import { route } from './pipeline/route';
import { coolingReadyInMs } from './pipeline/transientWait';
import { runSteps, type Step } from './pipeline/steps';
import { REQUEST_ID_HEADER, sendAnthropicError } from './relay/clientAnswer';
import { LiveStreams } from './relay/streamRelay';
import { ConfigGeneration, type ConfigStatus, type RuntimeConfig } from './runtimeConfig';
import type { DecisionSink } from './state/decisionLog';
import { parseDecisionQuery, type DecisionPage } from './state/decisionQuery';
import type { RouterState } from './state/routerState';
import { PacedRelease } from './state/pacedRelease';
import { HeaderNotes } from './state/headerNotes';
import { RetryBudget } from './state/retryBudget';
import { WaitingRoom } from './state/waitingRoom';
import type { StatusReport } from './status/status';
import type { HistoryRange, UsageSeries } from './state/usageHistory';
import { createUpstreamAgent } from './upstream/agent';

/** The request path: each step reads and fills the request's context; a step that answers ends it. */
const REQUEST_PATH: readonly Step[] = [
  authenticate, // origin and client key (403, 401)
  route, // local endpoints, 404, or a forwarded route with its id and configuration
  readRequestBody, // 413
  identifySession, // model, session, stream flag (400)
  sharedBinding, // a shared pool only: the binding of a session this router does not hold
  plan,
  attempt, // upstream calls; commits the first good answer and binds the session
  relay, // a held upstream error, or "no usable account"
  record, // counters and the decision record
];

export interface EngineOptions {
  config: RuntimeConfig;
  state: RouterState;
  tokens: TokenManager;
  decisions: DecisionSink;
  log: Logger;
  /** The local client key every request must carry. */
  clientKey: string;
  /** The clock, epoch ms (default `Date.now`). */
  now?: () => number;
  /** The upstream connection pool (default: one of the engine's own, closed with it). */
  dispatcher?: Dispatcher;
  /** Where each effective routing value came from (`default`, `settings`, a file path). */
  sources?: Record<string, string>;
  /** The shared pool and its store's reachability, when the router shares its state (docs/shared-pool.md). */
  shared?: { state: SharedState; status: () => StoreStatus };
}

/** The history samples every account's utilisation this often, ms. */
const SAMPLE_EVERY_MS = 60_000;
/** … and this long after the state changed (once per burst of changes), ms. */
const SAMPLE_AFTER_CHANGE_MS = 2_000;

export class RouterEngine {
  readonly configStatus: ConfigStatus;
  readonly state: RouterState;
  private readonly services: RouterServices;
  private readonly ownsDispatcher: boolean;

  constructor(opts: EngineOptions) {
    const now = opts.now ?? Date.now;
    this.state = opts.state;
    this.ownsDispatcher = !opts.dispatcher;
    this.configStatus = { generation: 1, loadedAtMs: now(), lastReloadError: null, lastReloadErrorAtMs: null, sources: opts.sources ?? {} };
    const waitingRoom = new WaitingRoom();
    this.services = {
      state: opts.state,
      tokens: opts.tokens,
      dispatcher: opts.dispatcher ?? createUpstreamAgent(),
      decisions: opts.decisions,
      log: opts.log,
      now,
      startedAtMs: now(),
      configStatus: this.configStatus,
      live: new ConfigGeneration(opts.config),
      clientKey: opts.clientKey,
      loggedPolicyErrors: new Set(),
      changeStreams: new Set(),
      streams: new LiveStreams(),
      bodyBudget: new BodyBudget(),
      waitingRoom,
      coolingRelease: new PacedRelease(waitingRoom, coolingReadyInMs(opts.state, now), Math.random, now),
      retryBudget: new RetryBudget(),
      headerNotes: new HeaderNotes(opts.log),
      shared: opts.shared?.state,
      storeStatus: opts.shared?.status,
    };
    this.state.affinity.setIdleTtl(opts.config.policy.sessionAffinityIdleTtlMs);
    this.state.sessionWork.setIdleTtl(opts.config.policy.sessionAffinityIdleTtlMs);
    this.sampler = setInterval(this.sampleUsage, SAMPLE_EVERY_MS);
    this.sampler.unref?.();
    this.state.events.on('changed', this.onStateChanged);
    this.state.events.on('windowReset', this.onWindowReset);
    this.state.events.on('cooldownLifted', this.onCooldownLifted);
  }

  /** A cooldown lifted early (Reset Cooldown, fresh evidence, another router) frees its waiters now, not at its old end. */
  private readonly onCooldownLifted = (): void => this.services.coolingRelease.recheck();

  private readonly sampler: NodeJS.Timeout;
  private sampleSoon: NodeJS.Timeout | undefined;
  private readonly onStateChanged = (): void => {
    if (this.sampleSoon) return;
    this.sampleSoon = setTimeout(this.sampleUsage, SAMPLE_AFTER_CHANGE_MS);
    this.sampleSoon.unref?.();
  };

  /**
   * Samples every configured account's 5-hour and weekly utilisation (the numbers `/status` shows
   * for a model-less request) and cooldown into the usage history; forgets accounts no longer configured.
   */
  readonly sampleUsage = (): void => {
    this.sampleSoon = undefined;
    const now = this.services.now();
    const config = this.services.live.config;
    const metrics = this.metricsFor(config, null, now);
    const history = this.state.history;
    history.keepOnly(new Set(config.accounts.map((a) => a.label)));
    for (const a of config.accounts) {
      const m = metrics.get(a.label);
      if (!m) continue;
      const cd = this.state.cooldowns.get(a.label);
      history.sample(a.label, { session: m.sessionUsed, weekly: m.weeklyUsed, cooling: cd !== undefined && cd.untilMs > now }, now);
    }
  };

  /** Each configured account's utilisation, requests and tokens over `range` up to now (the `/history` endpoint's answer). */
  history(range: HistoryRange): UsageSeries[] {
    return this.state.history.series(range, this.services.now());
  }

  /** Warm-ups on their way; close waits for them. */
  private readonly warmUps = new Set<Promise<void>>();

  /** A window of `label` newly reset: its limit warm-up, when it has opted in (pipeline/warmUp.ts). */
  private readonly onWindowReset = (label: string, window: ResetWindow): void => {
    const sent = warmUp(this.services, label, window).finally(() => this.warmUps.delete(sent));
    this.warmUps.add(sent);
  };

  /** The configuration new requests will use. */
  get config(): RuntimeConfig {
    return this.services.live.config;
  }

  /**
   * Installs a new configuration generation. Requests already running keep
   * theirs. Switching affinity off clears the binding store; switching it on
   * starts empty (docs/routing.md#affinity-store).
   */
  applyConfig(next: RuntimeConfig, sources?: Record<string, string>): void {
    const s = this.services;
    const prev = s.live.config;
    if (prev.policy.sessionAffinity !== next.policy.sessionAffinity) this.state.affinity.clear();
    this.state.affinity.setIdleTtl(next.policy.sessionAffinityIdleTtlMs);
    this.state.sessionWork.setIdleTtl(next.policy.sessionAffinityIdleTtlMs);
    const generation = new ConfigGeneration(next);
    for (const a of prev.accounts) if (!generation.accountsByLabel.has(a.label)) this.state.forgetAccount(a.label);
    s.live = generation;
    const cs = this.configStatus;
    cs.generation++;
    cs.loadedAtMs = s.now();
    cs.lastReloadError = null;
    cs.lastReloadErrorAtMs = null;
    if (sources) cs.sources = sources;
    s.tokens.invalidate();
    this.state.changed();
    s.log.info(`config: generation ${cs.generation} active`);
    const primary = next.policy.primaryAccount;
    if (primary !== undefined && !generation.accountsByLabel.has(primary)) s.log.warn(`config: primary-account "${primary}" names no account; it has no effect`);
  }

  /** The local client key requests must carry. */
  get clientKey(): string {
    return this.services.clientKey;
  }

  /**
   * Replaces the local client key (a rotation); requests with the old key are refused from now on,
   * and the `/events` streams opened with it end (their readers must prove they hold the new key).
   */
  setClientKey(key: string): void {
    if (key === this.services.clientKey) return;
    this.services.clientKey = key;
    endChangeStreams(this.services, true);
  }

  /** Records a rejected reload; the running configuration stays. */
  reportReloadError(message: string): void {
    this.configStatus.lastReloadError = message;
    this.configStatus.lastReloadErrorAtMs = this.services.now();
    this.state.changed();
    this.services.log.error(`config: reload rejected, keeping generation ${this.configStatus.generation}: ${message}`);
  }

  /** The `node:http` request handler. Never throws. */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    this.running++;
    const ctx = new RequestContext(req, res, this.services);
    let forwarded: Promise<void> | void = undefined;
    try {
      forwarded = runSteps(REQUEST_PATH, ctx);
    } catch (err) {
      this.failed(err, ctx);
    }
    // One derived promise per request: this runs on every request, and each hop is a microtask.
    if (!forwarded) return this.handled();
    forwarded.then(this.handled, (err: unknown) => {
      this.failed(err, ctx);
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
  private failed(err: unknown, ctx: RequestContext): void {
    const { res } = ctx;
    (ctx.body as RequestBody | undefined)?.release();
    this.state.countInternalError();
    this.services.log.error(`internal error: ${(err as Error)?.stack ?? String(err)}`);
    if (!res.headersSent) {
      sendAnthropicError(res, 500, 'api_error', 'Claude Router internal error; see its log.', ctx.requestId ? { [REQUEST_ID_HEADER]: ctx.requestId } : undefined);
    } else if (!res.writableEnded) res.destroy();
  }

  /**
   * Metrics of every configured account for a request of `model` at `now` (epoch ms), by label
   * (the same numbers the planner, `/status` and the VS Code views use).
   */
  metricsFor(config: RuntimeConfig, model: string | null, now: number): Map<string, AccountMetrics> {
    return metricsFor(this.state, config, model, now);
  }

  /** The `/status` report (no secrets); its preview is for a request of `model` (null: model-less). */
  status(model: string | null = null): StatusReport {
    return routerStatus(this.services, model);
  }

  /** A person's "Reset Cooldown" of `label` (see resetAccountCooldown); undefined when no account has that label. */
  resetCooldown(label: string): ResetCooldownAnswer | undefined {
    return resetAccountCooldown(this.services, label);
  }

  /**
   * A page of the decision log on disk, as `GET /decisions?<query>` answers it (the same parser and
   * reader: decisionQuery.ts): the newest matching records, oldest first, and the cursor of the
   * page before them (null when none is left); `{ error }` names a bad parameter.
   * @throws Error when the log cannot be read
   */
  async queryDecisions(query: string): Promise<DecisionPage | { error: string }> {
    const q = parseDecisionQuery(query);
    return 'error' in q ? q : this.services.decisions.query(q);
  }

  /** The most recent decision records, newest last. */
  recentDecisions(limit: number): DecisionRecord[] {
    return this.services.decisions.recent(limit);
  }

  /**
   * Ends every committed answer still streaming with one `overloaded_error` event saying
   * `message` (the router is going away and cannot wait for them); the host calls it just before
   * it cuts the remaining connections, so clients see an error they can retry, not a cut.
   */
  endStreams(message: string): void {
    for (const relay of this.services.streams.all()) relay.shutDown(message);
  }

  /**
   * Ends `/events` streams and waits (at most `graceMs`) for requests still being handled —
   * their decisions are recorded as they end, so close the decision log after this. Close
   * the HTTP server first: its connections are what ends those requests.
   */
  async close(graceMs = 5_000): Promise<void> {
    clearInterval(this.sampler);
    if (this.sampleSoon) clearTimeout(this.sampleSoon);
    this.sampleUsage(); // the last numbers, saved with the history
    this.state.events.off('changed', this.onStateChanged);
    this.state.events.off('windowReset', this.onWindowReset);
    this.state.events.off('cooldownLifted', this.onCooldownLifted);
    endChangeStreams(this.services);
    this.services.coolingRelease.close();
    this.services.waitingRoom.close();
    if (this.running > 0) {
      await new Promise<void>((resolve) => {
        this.onIdle = resolve;
        setTimeout(resolve, graceMs).unref();
      });
    }
    await Promise.all(this.warmUps);
    if (this.ownsDispatcher) await this.services.dispatcher.close();
  }
}
