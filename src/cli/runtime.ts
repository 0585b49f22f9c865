/**
 * The standalone proxy: config → credential stores → the router (createRouter)
 * listening → runtime file → hot reload. `claude-router start`, `claude-router
 * demo` and the integration tests all start the router through `startRouter`.
 */
import * as path from 'node:path';
import { AccountRegistry } from '../accounts/registry';
import { FileCredentialStore } from '../accounts/fileCredentialStore';
import { seedCredentials, type SeedCredential } from '../accounts/seed';
import type { UsagePoller } from '../accounts/usagePoller';
import type { AccountInfo } from '../accounts/types';
import { DEFAULT_SERVER_SETTINGS, policyFrom, type ConfigInput } from '../config/schema';
import { camelToKebab } from '../config/keys';
import { watchConfigFile, type ConfigWatcher } from '../config/watch';
import { createRouter } from '../proxy/createRouter';
import type { RouterEngine } from '../proxy/engine';
import type { RuntimeConfig } from '../proxy/runtimeConfig';
import type { Logger } from '../proxy/log';
import type { ProxyServer } from '../proxy/http/server';
import { defaultStateDir, expandHome, loadOrCreateClientKey, runtimeFile, watchClientKey } from './stateDir';
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
  /** The key in force (it follows a rotation). */
  readonly clientKey: string;
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
    const info: AccountInfo = { label: a.label, kind, fallback: a.fallback ?? false, enabled: a.enabled ?? true };
    if (a.priority !== undefined) info.priority = a.priority;
    if (a.costTier !== undefined) info.costTier = a.costTier;
    if (a.planSize !== undefined) info.planSize = a.planSize;
    accounts.push(info);
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
 * Starts the proxy for a validated config: the router (createRouter) listening on
 * `listen`, the runtime file other commands find it by, usage polling and hot reload.
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
    throw new Error(`state-dir ${stateDir} cannot be used: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  const store = new FileCredentialStore(path.join(stateDir, 'credentials.json'));
  const registry = new AccountRegistry(path.join(stateDir, 'accounts.json'));
  const clientKey = config.clientKey ?? loadOrCreateClientKey(stateDir);

  /** The runtime config of a config file, and the labels whose credentials it just stored. */
  const runtimeFor = async (c: ConfigInput): Promise<{ runtime: RuntimeConfig; seeded: string[] }> => {
    const { accounts, seeds } = await resolveAccounts(c, registry);
    const seeded = await seedCredentials(store, seeds);
    if (seeded.length) log.info(`accounts: stored credentials from the config file for ${seeded.join(', ')}`);
    const runtime = {
      policy: policyFrom(c.routing, env),
      accounts,
      upstreamBaseUrl: (c.upstream?.baseUrl ?? DEFAULT_SERVER_SETTINGS.upstreamBaseUrl).replace(/\/+$/, ''),
    };
    return { runtime, seeded };
  };

  const first = await runtimeFor(config);
  const router = await createRouter({
    config: first.runtime,
    sources: routingSources(config, opts.configPath, env),
    credentials: store,
    tokenUrl: config.upstream?.tokenUrl ?? DEFAULT_SERVER_SETTINGS.tokenUrl,
    clientKey,
    log,
    decisionDir: stateDir,
    stateFile: path.join(stateDir, 'router-state.json'),
    listen: { host: config.listen?.host ?? DEFAULT_SERVER_SETTINGS.host, port: opts.port ?? config.listen?.port ?? DEFAULT_SERVER_SETTINGS.port },
    now,
  });
  const { engine, state, poller } = router;
  const server = router.server!;
  // New credentials from the file lift a sign-in flag.
  for (const label of first.seeded) state.clearNeedsSignIn(label);

  writeFileSync(runtimeFile(stateDir), JSON.stringify({ url: server.url, pid: process.pid }), { mode: 0o600 });
  if (opts.pollUsage !== false) poller.start();

  /** Whether the configuration in force sets `client-key` (then the key file is not used). */
  let keyInConfig = config.clientKey !== undefined;
  let watcher: ConfigWatcher | undefined;
  if (opts.configPath) {
    const file = opts.configPath;
    watcher = watchConfigFile(
      file,
      async (next) => {
        try {
          // A rotated client key takes effect at once (the old one stops working).
          keyInConfig = next.clientKey !== undefined;
          const key = next.clientKey ?? loadOrCreateClientKey(stateDir);
          if (key !== engine.clientKey) {
            engine.setClientKey(key);
            log.info('config: the local client key changed; clients need the new key');
          }
          const { runtime, seeded } = await runtimeFor(next);
          for (const label of seeded) state.clearNeedsSignIn(label);
          engine.applyConfig(runtime, routingSources(next, file, env));
        } catch (err) {
          engine.reportReloadError((err as Error).message);
        }
      },
      (message) => engine.reportReloadError(message),
    );
  }

  // `claude-router rotate-key` (or an edit) replaces <state-dir>/client-key: in force within a
  // second, unless the config file sets the key.
  const stopKeyWatch = watchClientKey(stateDir, (key) => {
    if (keyInConfig || key === engine.clientKey) return;
    engine.setClientKey(key);
    log.info('client key: <state-dir>/client-key changed; requests with the previous key are refused');
  });

  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    port: server.port,
    get clientKey() {
      return engine.clientKey;
    },
    stateDir,
    engine,
    server,
    poller,
    close: () =>
      (closing ??= (async () => {
        watcher?.close();
        stopKeyWatch();
        rmSync(runtimeFile(stateDir), { force: true });
        await router.close();
      })()),
  };
}
