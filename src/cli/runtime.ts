/**
 * The standalone proxy: config → credential stores → the router (createRouter)
 * listening → runtime file → hot reload. `claude-router start`, `claude-router
 * demo` and the integration tests all start the router through `startRouter`.
 */
import * as path from 'node:path';
import { credentialNews } from '../accounts/credentialNews';
import { AccountRegistry } from '../accounts/registry';
import { FileCredentialStore } from '../accounts/fileCredentialStore';
import { seedCredentials } from '../accounts/seed';
import { accountChanges, resolveAccounts, routingInputOf } from './accountSet';
import { credentialChanges, credentialFingerprints, watchFiles, type CredentialFingerprints } from './stateWatch';
import type { UsagePoller } from '../accounts/usagePoller';
import { DEFAULT_SERVER_SETTINGS, policyFrom, type ConfigInput } from '../config/schema';
import { camelToKebab } from '../config/keys';
import { watchConfigFile, type ConfigWatcher } from '../config/watch';
import { createRouter } from '../proxy/createRouter';
import type { RouterEngine } from '../proxy/engine';
import type { RuntimeConfig } from '../proxy/runtimeConfig';
import type { Logger } from '../proxy/log';
import type { ProxyServer } from '../proxy/http/server';
import { defaultStateDir, expandHome, loadOrCreateClientKey, watchClientKey } from './stateDir';
import { checkPrivateDir } from './privateFiles';
import { findRunningProxy, registerProxy, unregisterProxy } from './discovery';
import { mkdirSync } from 'node:fs';
import type { CredentialStore } from '../accounts/types';
import type { SharedStore } from '../store/openStore';
import { openConfiguredStore } from './sharedStore';

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

/** Where each effective routing value came from. */
export function routingSources(config: ConfigInput, configPath: string | undefined, env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(policyFrom(undefined, env))) out[k] = 'default';
  for (const [k, v] of Object.entries(config.routing ?? {})) if (v !== undefined) out[k] = configPath ?? 'config';
  if ((env.CLAUDE_ROUTER_QUOTA_ROUTING ?? '').trim().toLowerCase() === 'off') out.quotaRouting = 'env CLAUDE_ROUTER_QUOTA_ROUTING';
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [camelToKebab(k), v]));
}

/**
 * Makes `stateDir` (0700) and checks it is this proxy's to use: private to this user, and no other
 * live proxy runs from it. @returns `stateDir`
 * @throws Error naming the directory and the fix when it cannot be made, is not private, or another proxy runs from it
 */
function claimStateDir(stateDir: string): string {
  try {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new Error(`state-dir ${stateDir} cannot be used: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  // Another user who can write it could choose its keys (privateFiles.ts).
  checkPrivateDir(stateDir, 'state-dir');
  // Two proxies on one state directory would share its files and unregister each other: one at a time.
  const other = findRunningProxy(stateDir);
  if (other && other.stateDir === stateDir && other.pid !== process.pid) {
    throw new Error(`a proxy already runs from ${stateDir} (pid ${other.pid}, ${other.url}): stop it first, or give this one another state directory (--state-dir)`);
  }
  return stateDir;
}

/**
 * Starts the proxy for a validated config: the router (createRouter) listening on
 * `listen`, the runtime file other commands find it by, usage polling and hot reload.
 * @throws Error when the port is taken, the state directory is unusable, or another proxy runs from it
 */
export async function startRouter(opts: StartOptions): Promise<RunningRouter> {
  const env = opts.env ?? process.env;
  const now = opts.now ?? Date.now;
  const { config, log } = opts;
  const stateDir = claimStateDir(stateDirOf(config, env));
  const store = new FileCredentialStore(path.join(stateDir, 'credentials.json'));
  const registry = new AccountRegistry(path.join(stateDir, 'accounts.json'));
  const clientKey = config.clientKey ?? loadOrCreateClientKey(stateDir);
  // A shared pool (docs/shared-pool.md): the credentials live in the store, credentials.json keeps this machine's copy.
  const pool: SharedStore | undefined = config.stateStore ? await openConfiguredStore(config, stateDir, store, log, now) : undefined;
  const credentials: CredentialStore = pool?.credentials ?? store;

  /** The runtime config of a config file with the state directory's accounts, its sources, and the labels whose credentials it just stored. */
  const runtimeFor = async (c: ConfigInput, file: string | undefined): Promise<{ runtime: RuntimeConfig; sources: Record<string, string>; seeded: string[] }> => {
    const set = await resolveAccounts(c, registry);
    const seeded = await seedCredentials(credentials, set.seeds);
    if (seeded.length) log.info(`accounts: stored credentials from the config file for ${seeded.join(', ')}`);
    const runtime = {
      policy: policyFrom(routingInputOf(c, set), env),
      accounts: set.accounts,
      upstreamBaseUrl: (c.upstream?.baseUrl ?? DEFAULT_SERVER_SETTINGS.upstreamBaseUrl).replace(/\/+$/, ''),
    };
    const sources = routingSources(c, file, env);
    if (set.statePrimary !== undefined) sources['primary-account'] = registry.file;
    return { runtime, sources, seeded };
  };

  let first: Awaited<ReturnType<typeof runtimeFor>>;
  let router: Awaited<ReturnType<typeof createRouter>>;
  try {
    first = await runtimeFor(config, opts.configPath);
    router = await createRouter({
      config: first.runtime,
      sources: first.sources,
      credentials,
      store: pool?.connection,
      tokenUrl: config.upstream?.tokenUrl ?? DEFAULT_SERVER_SETTINGS.tokenUrl,
      clientKey,
      log,
      decisionDir: stateDir,
      stateFile: path.join(stateDir, 'router-state.json'),
      listen: { host: config.listen?.host ?? DEFAULT_SERVER_SETTINGS.host, port: opts.port ?? config.listen?.port ?? DEFAULT_SERVER_SETTINGS.port },
      now,
    });
  } catch (err) {
    await pool?.close();
    throw err;
  }
  const { engine, state, poller, tokens } = router;
  const server = router.server!;
  // New credentials from the file lift a sign-in flag.
  for (const label of first.seeded) state.clearNeedsSignIn(label);

  registerProxy(stateDir, { url: server.url, pid: process.pid, stateDir });
  if (opts.pollUsage !== false) poller.start();

  /** The configuration in force (the last good version of the file). */
  let current = config;
  /** Reloads run one after another, so an older one never lands last. */
  let reloads: Promise<void> = Promise.resolve();
  /** Applies `next` (a new config file version), or the state directory's accounts again; a failure keeps the last good set and shows in `/status`. */
  const reload = (next?: ConfigInput): Promise<void> =>
    (reloads = reloads.then(async () => {
      try {
        const c = next ?? current;
        if (next) {
          // A rotated client key takes effect at once (the old one stops working).
          const key = next.clientKey ?? loadOrCreateClientKey(stateDir);
          if (key !== engine.clientKey) {
            engine.setClientKey(key);
            log.info('config: the local client key changed; clients need the new key');
          }
        }
        const prev = engine.config;
        if (
          next &&
          (next.stateStore !== current.stateStore || next.stateStoreKeyFile !== current.stateStoreKeyFile || next.stateStorePasswordFile !== current.stateStorePasswordFile)
        )
          log.warn('config: state-store settings take effect when the router restarts; the store in use stays');
        const { runtime, sources, seeded } = await runtimeFor(c, opts.configPath);
        current = c;
        for (const label of seeded) state.clearNeedsSignIn(label);
        const changes = accountChanges(prev.accounts, runtime.accounts);
        if (prev.policy.primaryAccount !== runtime.policy.primaryAccount)
          changes.push(`primary now ${runtime.policy.primaryAccount === undefined ? 'none' : `"${runtime.policy.primaryAccount}"`}`);
        if (changes.length) log.info(`accounts: ${changes.join('; ')}`);
        engine.applyConfig(runtime, sources);
      } catch (err) {
        engine.reportReloadError((err as Error).message);
        log.warn(`config: ${(err as Error).message}; the last good configuration stays in force`);
      }
    }));

  let watcher: ConfigWatcher | undefined;
  if (opts.configPath) {
    watcher = watchConfigFile(
      opts.configPath,
      (next) => reload(next),
      (message) => engine.reportReloadError(message),
    );
  }

  // `accounts login|logout|add|remove|rename|enable|disable|move|primary` write the state directory.
  let stored: CredentialFingerprints = await credentialFingerprints(store).catch((err: Error) => {
    log.warn(`accounts: ${err.message}`);
    return new Map();
  });
  const credentialsChanged = async () => {
    let now: CredentialFingerprints;
    try {
      now = await credentialFingerprints(store);
    } catch (err) {
      log.warn(`accounts: ${(err as Error).message}; the credentials held stay in use`);
      return;
    }
    const { changed, removed } = credentialChanges(stored, now);
    stored = now;
    for (const label of changed) {
      // Our own refresh, or the shared store keeping this copy current, is no news; an `accounts` command's pair is (and goes to the pool).
      if (!(await credentialNews(label, store, tokens, pool?.credentials))) continue;
      tokens.invalidate(label);
      state.clearNeedsSignIn(label);
      log.info(`accounts: new credentials for "${label}"`);
    }
    for (const label of removed) {
      // Signed out on this machine: signed out of the pool.
      if (pool) await pool.credentials.delete(label).catch((err: Error) => log.warn(`accounts: "${label}" is still in the store (${err.message.split('\n')[0]})`));
      tokens.invalidate(label);
      if (engine.config.accounts.some((a) => a.label === label)) state.markNeedsSignIn(label, 'signed out: no stored credentials');
      log.info(`accounts: credentials of "${label}" removed`);
    }
  };
  const stopStateWatch = watchFiles([store.file, registry.file], (changed) => {
    reloads = reloads.then(() => (changed.has(store.file) ? credentialsChanged() : undefined));
    if (changed.has(registry.file)) void reload();
  });

  /** Whether the configuration in force sets `client-key` (then the key file is not used). */
  const keyInConfig = () => current.clientKey !== undefined;
  // `claude-router rotate-key` (or an edit) replaces <state-dir>/client-key: in force within a
  // second, unless the config file sets the key.
  const stopKeyWatch = watchClientKey(stateDir, (key) => {
    if (keyInConfig() || key === engine.clientKey) return;
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
        stopStateWatch();
        await reloads;
        unregisterProxy(stateDir);
        await router.close();
        await pool?.close();
      })()),
  };
}
