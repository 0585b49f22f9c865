/**
 * The router, assembled in one place for the CLI, the extension and its
 * simulated mode: state (+ persistence), decision log, token manager, usage
 * poller and engine, with one ordered `close()`. Hosts add what is theirs
 * (the CLI its listener's runtime file and config watch, the extension its
 * shared proxy and settings).
 */
import { oauthRefresher } from '../accounts/oauth';
import { TokenManager } from '../accounts/tokenManager';
import type { CredentialStore } from '../accounts/types';
import { UsagePoller } from '../accounts/usagePoller';
import { RouterEngine } from './engine';
import type { RuntimeConfig } from './runtimeConfig';
import { listen, type ProxyServer } from './http/server';
import type { ProxyRole } from './http/sharedProxy';
import { tokenSaveLog, type Logger } from './log';
import { DecisionLog } from './state/decisionLog';
import { persistState, type StatePersistence } from './state/persistence';
import { RouterState } from './state/routerState';
import { isCoolingDown } from '../quota/cooldown';
import type { StoreConnection } from '../store/connection';
import { SharedCredentialStore } from '../store/sharedCredentials';
import { shareState, type SharedState } from './state/sharedState';

export interface RouterOptions {
  config: RuntimeConfig;
  /** Where each routing value came from, for `/status`. */
  sources?: Record<string, string>;
  credentials: CredentialStore;
  /** OAuth token endpoint, e.g. `https://console.anthropic.com/v1/oauth/token`. */
  tokenUrl: string;
  /** The local key every client request must carry. */
  clientKey: string;
  log: Logger;
  /** Directory of `decisions.jsonl` (created when missing). */
  decisionDir: string;
  /** e.g. `<state-dir>/router-state.json`; without it the state lives in memory only. */
  stateFile?: string;
  /** Save the state from the start (default true); false waits for `persistence.lead()`. */
  saveState?: boolean;
  /**
   * The store this router shares its pool through (docs/shared-pool.md), started by the host;
   * the host closes it after the router. Without it, this machine's files only.
   */
  store?: StoreConnection;
  /** Listen on this loopback address (port 0 picks one); without it the host serves `engine.handle` itself. */
  listen?: { host: string; port: number };
  now?: () => number;
}

export interface Router {
  engine: RouterEngine;
  state: RouterState;
  tokens: TokenManager;
  /** Not started: the host starts it when this router serves. */
  poller: UsagePoller;
  decisions: DecisionLog;
  /** Present when `stateFile` was given. */
  persistence: StatePersistence | undefined;
  /** Present when `listen` was given. */
  server: ProxyServer | undefined;
  /** Present when `store` was given. */
  shared: SharedState | undefined;
  /**
   * Follows this router's part in a shared proxy (SharedProxy's `role` event): it saves
   * state only while it leads, and on becoming leader first loads newer state saved by the
   * previous leader (see persistence.ts). A `stopped` role changes nothing (a window that
   * releases the port stops saving through `persistence.follow()` once it has flushed).
   * @returns true when newer saved state was loaded
   */
  roleChanged(role: ProxyRole): boolean;
  /**
   * Stops the poller, closes the server (if this router owns one), lets the engine finish
   * its requests, saves the state, then flushes the decision log. Idempotent.
   */
  close(): Promise<void>;
}

/**
 * Builds a router; listens when `opts.listen` is given.
 * @throws Error when the port is taken (EADDRINUSE) or the address is not loopback; everything built is closed first
 */
export async function createRouter(opts: RouterOptions): Promise<Router> {
  const now = opts.now ?? Date.now;
  const { config, log } = opts;
  const state = new RouterState(config.policy.sessionAffinityIdleTtlMs);
  const persistence = opts.stateFile ? persistState(state, { file: opts.stateFile, now, saving: opts.saveState, log: (m) => log.info(m) }) : undefined;
  if (persistence?.restored) log.info('state: restored bindings, cooldowns and quota snapshots');
  const decisions = new DecisionLog({ dir: opts.decisionDir, now, onError: (e) => log.warn(`decision log: ${e.message}`) });
  const tokens = new TokenManager(opts.credentials, oauthRefresher(opts.tokenUrl, now), now, tokenSaveLog(log));
  // The grant times (their age is in `/status`) before an account's first request.
  void tokens.readGrants(config.accounts.filter((a) => a.kind === 'oauth').map((a) => a.label));
  const store = opts.store;
  const shared = store ? shareState(state, store, { now, log }) : undefined;
  // Another router stored a new pair (a rotation, a sign-in): check it before the next use.
  const stopCredentialNews =
    opts.credentials instanceof SharedCredentialStore
      ? opts.credentials.onRemoteChange((label) => {
          tokens.invalidate(label);
          state.clearNeedsSignIn(label);
          state.liftLocalCooldown(label);
        })
      : undefined;
  if (shared) await shared.reconcile();
  const engine = new RouterEngine({
    config,
    state,
    tokens,
    decisions,
    log,
    clientKey: opts.clientKey,
    now,
    sources: opts.sources,
    shared: store && shared ? { state: shared, status: () => store.status() } : undefined,
  });
  const poller = new UsagePoller({
    baseUrl: () => engine.config.upstreamBaseUrl,
    accounts: () => engine.config.accounts.filter((a) => a.enabled && a.kind === 'oauth').map((a) => a.label),
    freshness: (label) => engine.metricsFor(engine.config, null, now()).get(label)?.freshness ?? 'unknown',
    wantsReading: (label) => coolingForQuota(state, label, now()),
    credentials: (label) => tokens.current(label),
    record: (label, snapshot, sentAtMs) => state.recordEvidence(label, snapshot, sentAtMs),
    log: (m) => log.info(m),
    now,
  });

  let server: ProxyServer | undefined;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      poller.stop();
      // Streams still running when the grace time is up end with an error event a client retries, not a cut.
      await server?.close(undefined, () => engine.endStreams('Claude Router is shutting down; retry the request.'));
      // The engine first: requests still ending record their decisions and state.
      await engine.close();
      stopCredentialNews?.();
      await shared?.close();
      await persistence?.close();
      await decisions.close();
    })());

  if (opts.listen) {
    try {
      server = await listen(engine.handle, opts.listen.host, opts.listen.port);
    } catch (err) {
      await close();
      throw err;
    }
  }
  const roleChanged = (role: ProxyRole): boolean => {
    if (role.kind === 'leader') return persistence?.lead() ?? false;
    if (role.kind !== 'stopped') persistence?.follow();
    return false;
  };
  return { engine, state, tokens, poller, decisions, persistence, server, shared, roleChanged, close };
}

/** Cooled for an exhausted window, account-wide or for a model family, at `now` (epoch ms): it earns no header evidence for it. */
function coolingForQuota(state: RouterState, label: string, now: number): boolean {
  const c = state.cooldowns.get(label);
  if (c?.reason === 'window_exhausted' && isCoolingDown(c, now)) return true;
  for (const s of state.scopedCooldowns.get(label)?.values() ?? []) if (isCoolingDown(s, now)) return true;
  return false;
}
