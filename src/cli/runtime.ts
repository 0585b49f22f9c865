/**
 * Composition root of the standalone proxy: config → stores → engine →
 * listener → hot reload. `claude-router start`, `claude-router demo` and the
 * integration tests all start the router through `startRouter`.
 */
import * as path from 'node:path';
import { AccountRegistry } from '../accounts/registry';
import { FileCredentialStore } from '../accounts/fileCredentialStore';
import { oauthRefresher } from '../accounts/oauth';
import { seedCredentials, type SeedCredential } from '../accounts/seed';
import { TokenManager } from '../accounts/tokenManager';
import { UsagePoller } from '../accounts/usagePoller';
import type { AccountInfo } from '../accounts/types';
import { DEFAULT_SERVER_SETTINGS, policyFrom, type ConfigInput } from '../config/schema';
import { camelToKebab } from '../config/keys';
import { watchConfigFile, type ConfigWatcher } from '../config/watch';
import { DecisionLog } from '../proxy/state/decisionLog';
import { RouterEngine } from '../proxy/engine';
import type { RuntimeConfig } from '../proxy/runtimeConfig';
import { tokenSaveLog, type Logger } from '../proxy/log';
import { RouterState } from '../proxy/state/routerState';
import { listen, type ProxyServer } from '../proxy/http/server';
import { persistState, type StatePersistence } from '../proxy/state/persistence';
import { defaultStateDir, expandHome, loadOrCreateClientKey, runtimeFile } from './stateDir';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';

export interface StartOptions {
  config: ConfigInput;
  /** The file `config` came from; watched for hot reload when given. */
  configPath?: string;
  /** Overrides `listen.port` (`--port`). */
  port?: number;
  log: Logger;
  /** Poll the usage endpoint for accounts without fresh evidence (default true). */
  pollUsage?: boolean;
  env?: NodeJS.ProcessEnv;
  now?: () => number;
}

export interface RunningRouter {
  url: string;
  port: number;
  clientKey: string;
  stateDir: string;
  engine: RouterEngine;
  server: ProxyServer;
  poller: UsagePoller;
  close(): Promise<void>;
}

/** The state directory a config selects. */
export function stateDirOf(config: ConfigInput, env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(expandHome(config.stateDir ?? defaultStateDir(env)));
}

/** Accounts of a config file plus accounts added by command, in that order; and the YAML seeds. */
export async function resolveAccounts(config: ConfigInput, registry: AccountRegistry): Promise<{ accounts: AccountInfo[]; seeds: SeedCredential[] }> {
  const accounts: AccountInfo[] = [];
  const seeds: SeedCredential[] = [];
  for (const a of config.accounts ?? []) {
    const kind = a.apiKey ? 'api_key' : 'oauth';
    accounts.push({ label: a.label, kind, fallback: a.fallback ?? false, enabled: a.enabled ?? true });
    const token = a.apiKey ?? a.accessToken;
    if (token) seeds.push({ label: a.label, accessToken: token, refreshToken: a.refreshToken, expiresAtMs: a.expiresAt });
  }
  const inConfig = new Set(accounts.map((a) => a.label));
  for (const a of await registry.list()) if (!inConfig.has(a.label)) accounts.push(a);
  return { accounts, seeds };
}

/** Where each effective routing value came from. */
export function routingSources(config: ConfigInput, configPath: string | undefined, env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(policyFrom(undefined, env))) out[k] = 'default';
  for (const [k, v] of Object.entries(config.routing ?? {})) if (v !== undefined) out[k] = configPath ?? 'config';
  if ((env.CLAUDE_ROUTER_QUOTA_ROUTING ?? '').trim().toLowerCase() === 'off') out.quotaRouting = 'env CLAUDE_ROUTER_QUOTA_ROUTING';
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [camelToKebab(k), v]));
}

/**
 * Starts the proxy for a validated config.
 * @throws Error when the port is taken or the state directory is unusable
 */
export async function startRouter(opts: StartOptions): Promise<RunningRouter> {
  const env = opts.env ?? process.env;
  const now = opts.now ?? Date.now;
  const { config, log } = opts;
  const stateDir = stateDirOf(config, env);
  try {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new Error(`state-dir ${stateDir} cannot be used: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const store = new FileCredentialStore(path.join(stateDir, 'credentials.json'));
  const registry = new AccountRegistry(path.join(stateDir, 'accounts.json'));
  const clientKey = config.clientKey ?? loadOrCreateClientKey(stateDir);

  const runtimeFor = async (c: ConfigInput): Promise<RuntimeConfig> => {
    const { accounts, seeds } = await resolveAccounts(c, registry);
    const seeded = await seedCredentials(store, seeds);
    if (seeded.length) log.info(`accounts: stored credentials from the config file for ${seeded.join(', ')}`);
    // New credentials from the file lift a sign-in flag (the state may not exist yet at start).
    for (const label of seeded) stateRef?.clearNeedsSignIn(label);
    if (!stateRef) pendingSeeded.push(...seeded);
    return {
      policy: policyFrom(c.routing, env),
      accounts,
      upstreamBaseUrl: (c.upstream?.baseUrl ?? DEFAULT_SERVER_SETTINGS.upstreamBaseUrl).replace(/\/+$/, ''),
    };
  };

  let stateRef: RouterState | undefined;
  const pendingSeeded: string[] = [];
  const runtime = await runtimeFor(config);
  const state = new RouterState(runtime.policy.sessionAffinityIdleTtlMs);
  const { restored, saver } = persistState(state, path.join(stateDir, 'router-state.json'), now);
  if (restored) log.info('state: restored bindings, cooldowns and quota snapshots');
  for (const label of pendingSeeded) state.clearNeedsSignIn(label);
  stateRef = state;
  const decisions = new DecisionLog({ dir: stateDir, now, onError: (e) => log.warn(`decision log: ${e.message}`) });
  const tokens = new TokenManager(store, oauthRefresher(config.upstream?.tokenUrl ?? DEFAULT_SERVER_SETTINGS.tokenUrl, now), now, tokenSaveLog(log));
  const engine = new RouterEngine({
    config: runtime,
    state,
    tokens,
    decisions,
    log,
    clientKey,
    now,
    sources: routingSources(config, opts.configPath, env),
  });

  let server: ProxyServer;
  try {
    server = await listen(engine.handle, config.listen?.host ?? DEFAULT_SERVER_SETTINGS.host, opts.port ?? config.listen?.port ?? DEFAULT_SERVER_SETTINGS.port);
  } catch (err) {
    await Promise.all([engine.close(), saver.close(), decisions.close()]);
    throw err;
  }

  writeFileSync(runtimeFile(stateDir), JSON.stringify({ url: server.url, pid: process.pid }), { mode: 0o600 });

  const poller = new UsagePoller({
    baseUrl: () => engine.config.upstreamBaseUrl,
    accounts: () => engine.config.accounts.filter((a) => a.enabled && a.kind === 'oauth').map((a) => a.label),
    freshness: (label) => engine.metricsFor(engine.config, null, now()).get(label)?.freshness ?? 'unknown',
    credentials: (label) => tokens.current(label),
    record: (label, snapshot, sentAtMs) => state.recordEvidence(label, snapshot, sentAtMs),
    log: (m) => log.info(m),
    now,
  });
  if (opts.pollUsage !== false) poller.start();

  let watcher: ConfigWatcher | undefined;
  if (opts.configPath) {
    const file = opts.configPath;
    watcher = watchConfigFile(
      file,
      async (next) => {
        try {
          // A rotated client key takes effect at once (the old one stops working).
          const key = next.clientKey ?? loadOrCreateClientKey(stateDir);
          if (key !== engine.clientKey) {
            engine.setClientKey(key);
            log.info('config: the local client key changed; clients need the new key');
          }
          engine.applyConfig(await runtimeFor(next), routingSources(next, file, env));
        } catch (err) {
          engine.reportReloadError((err as Error).message);
        }
      },
      (message) => engine.reportReloadError(message),
    );
  }

  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    port: server.port,
    clientKey,
    stateDir,
    engine,
    server,
    poller,
    close: () =>
      (closing ??= (async () => {
        watcher?.close();
        poller.stop();
        rmSync(runtimeFile(stateDir), { force: true });
        await server.close();
        // The engine first: requests still ending record their decisions and state.
        await engine.close();
        await Promise.all([(saver as StatePersistence).close(), decisions.close()]);
      })()),
  };
}
