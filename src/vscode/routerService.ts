/**
 * The router inside the extension host: builds the engine from settings,
 * SecretStorage and global state, shares one proxy between windows, keeps
 * the engine's configuration in step with settings and account changes, and
 * offers a simulated-accounts mode. UI components never touch the engine;
 * they read a `RouterModel` (see routerModel.ts).
 */
import * as path from 'node:path';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import { randomBytes } from 'node:crypto';
import { credentialNews } from '../accounts/credentialNews';
import { MemoryCredentialStore } from '../accounts/memoryCredentialStore';
import type { AccountInfo, CredentialStore } from '../accounts/types';
import { loadConfigFile } from '../config/load';
import type { RoutingInput } from '../config/schema';
import { policyFromSettings, type DefaultsLayer } from '../config/settingsPolicy';
import { watchConfigFile, type ConfigWatcher } from '../config/watch';
import { startFakeUpstream, type FakeUpstream } from '../sim';
import { createRouter, type Router } from '../proxy/createRouter';
import type { RouterEngine } from '../proxy/engine';
import type { RuntimeConfig } from '../proxy/runtimeConfig';
import type { RoutingPolicy } from '../routing/policy';
import type { Logger } from '../proxy/log';
import { SharedProxy, type ProxyRole } from '../proxy/http/sharedProxy';
import { AccountList, ACCOUNTS_VERSION_KEY } from './accountList';
import { credentialKey, SecretCredentialStore } from './secretCredentialStore';
import { DisposableStore } from './lifecycle';
import type { SettingsService } from './settings';
import { SIMULATED_ACCOUNTS, SIMULATED_POLICY } from './simulatedAccounts';
import type { SharedStore } from '../store/openStore';
import { openSharedStore } from './sharedStore';

const CLIENT_KEY_SECRET = 'claudeRouter.clientKey';

/** A new local client key: `clr-` and 32 random bytes (base64url). */
function newClientKey(): string {
  return `clr-${randomBytes(32).toString('base64url')}`;
}

/** One running router with what it owns. */
interface EngineSet {
  router: Router;
  close(): Promise<void>;
  simulated: FakeUpstream | undefined;
  /** Where its decision log is written. */
  decisionDir: string;
  /** Aborted when the simulated accounts stop (before the proxy returns to the real ones). */
  stopping?: AbortController;
}

export class RouterService {
  private readonly disposables = new DisposableStore();
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when the engine, its configuration, the proxy role or the account list changed. */
  readonly onDidChange = this.changed.event;
  private readonly roleChanged = new vscode.EventEmitter<ProxyRole>();
  /** Fires when this window's part in the shared proxy changed (not again for the same role). */
  readonly onDidChangeRole = this.roleChanged.event;
  private readonly keyChanged = new vscode.EventEmitter<void>();
  /** Fires when the local client key changed (rotated here or in another window of the profile). */
  readonly onDidChangeClientKey = this.keyChanged.event;
  readonly accounts: AccountList;
  readonly store: CredentialStore;
  private active: EngineSet | undefined;
  private real: EngineSet | undefined;
  private proxy: SharedProxy | undefined;
  private lastSettingsError: string | null = null;
  private reloads: Promise<void> = Promise.resolve();
  /** Serialises switching to and from simulated accounts. */
  private modeSwitch: Promise<void> = Promise.resolve();
  private disposed = false;
  private configWatcher: ConfigWatcher | undefined;
  /** The shared pool's store, when `claudeRouter.stateStore` is set (docs/shared-pool.md). */
  private pool: SharedStore | undefined;
  clientKey = '';

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: Logger,
    readonly settings: SettingsService,
  ) {
    this.accounts = this.disposables.add(new AccountList(context.globalState, context.secrets));
    this.store = new SecretCredentialStore(context.secrets, () => this.accounts.all().map((a) => a.label));
    this.disposables.add(this.changed);
    this.disposables.add(this.roleChanged);
    this.disposables.add(this.keyChanged);
  }

  /** The engine of this window (only meaningful while this window leads the proxy). */
  get engine(): RouterEngine | undefined {
    return this.active?.router.engine;
  }

  get role(): ProxyRole {
    return this.proxy?.role ?? { kind: 'starting' };
  }

  get simulated(): boolean {
    return this.active?.simulated !== undefined;
  }

  /** The folder of the decision log of the accounts in use (simulated ones have their own). */
  get decisionDir(): string {
    return this.active?.decisionDir ?? this.context.globalStorageUri.fsPath;
  }

  /** The fake upstream of the simulated accounts, while they serve. */
  get simulatedUpstream(): FakeUpstream | undefined {
    return this.active?.simulated;
  }

  /** The decision log (`decisions.jsonl`) of the serving engine: simulated accounts keep theirs in a temporary folder. */
  get decisionLogFile(): string | undefined {
    return this.active?.router.decisions.file;
  }

  /** Aborted when the simulated accounts stop; undefined while they do not serve. */
  get simulationSignal(): AbortSignal | undefined {
    return this.active?.stopping?.signal;
  }

  /** The proxy URL clients should use. */
  get url(): string {
    return `http://127.0.0.1:${this.settings.host.port}`;
  }

  /** The routing policy in force (of the serving engine: simulated accounts add a demo default under the settings). */
  get routingPolicy(): Readonly<RoutingPolicy> | undefined {
    return this.active?.router.engine.config.policy;
  }

  /** Where each routing key of the policy in force came from (a setting, the config file's path, a default). */
  get routingSources(): Readonly<Record<string, string>> {
    return this.active?.router.engine.configStatus.sources ?? {};
  }

  get settingsError(): string | null {
    return this.lastSettingsError;
  }

  async start(): Promise<void> {
    this.clientKey = await this.loadClientKey();
    this.real = await this.createRealEngine();
    this.active = this.real;
    await this.checkMissingSecrets();

    this.proxy = new SharedProxy({ host: '127.0.0.1', port: this.settings.host.port, clientKey: this.clientKey, log: this.log });
    this.proxy.setEngine(this.active.router.engine);
    this.proxy.events.on('role', (role: ProxyRole) => this.onRole(role));
    this.proxy.events.on('remoteChanged', () => this.changed.fire());
    this.active.router.state.events.on('changed', () => this.changed.fire());
    await this.proxy.start();

    this.onSettings(undefined);
    this.disposables.add(this.settings.onDidChange((e) => this.onSettings(e)));
    this.disposables.add(
      this.context.secrets.onDidChange((e) => {
        if (e.key === ACCOUNTS_VERSION_KEY) void this.reloadConfig();
        // Every window of the profile shares SecretStorage: a rotation in one reaches the others here.
        else if (e.key === CLIENT_KEY_SECRET) void this.context.secrets.get(CLIENT_KEY_SECRET).then((key) => this.adoptClientKey(key));
        else if (e.key.startsWith(credentialKey(''))) void this.credentialChanged(e.key.slice(credentialKey('').length));
      }),
    );
    this.disposables.add(this.accounts.onDidChange(() => void this.reloadConfig()));
    this.disposables.add({ dispose: () => this.configWatcher?.close() });
  }

  /**
   * Only the leading window saves the pool's state; a window that takes over first loads
   * what the previous leader saved (its own copy dates from its activation).
   */
  private onRole(role: ProxyRole): void {
    if (this.real?.router.roleChanged(role)) this.log.info('state: took over the bindings, cooldowns and quota snapshots the previous window saved');
    if (role.kind === 'leader') this.active?.router.poller.start();
    else this.active?.router.poller.stop();
    this.roleChanged.fire(role);
    this.changed.fire();
  }

  /** Start-up (no event) and every settings change. */
  private onSettings(e: vscode.ConfigurationChangeEvent | undefined): void {
    if (this.settings.changed(e, 'configFile')) this.watchConfigFile();
    if (!e) return; // start-up: the engine was just built from these settings
    if (this.settings.changed(e, 'routing') || this.settings.changed(e, 'configFile') || this.settings.changed(e, 'upstreamBaseUrl')) {
      void this.reloadConfig();
    }
    if (this.settings.changed(e, 'port')) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Claude Router: the new port is used after a window reload.'), vscode.l10n.t('Reload Window')).then((c) => {
        if (c) void vscode.commands.executeCommand('workbench.action.reloadWindow');
      });
    }
    if (this.settings.changed(e, 'stateStore')) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Claude Router: the state store is used after a window reload.'), vscode.l10n.t('Reload Window')).then((c) => {
        if (c) void vscode.commands.executeCommand('workbench.action.reloadWindow');
      });
    }
  }

  /** Hot reload of `claudeRouter.configFile`, like the CLI's: each edit re-applies the settings with the file. */
  private watchConfigFile(): void {
    this.configWatcher?.close();
    this.configWatcher = undefined;
    const file = this.settings.host.configFile;
    if (!file) return;
    // The reload re-reads and validates the file and reports an invalid version itself.
    this.configWatcher = watchConfigFile(
      file,
      () => this.reloadConfig(),
      () => void this.reloadConfig(),
    );
  }

  private async loadClientKey(): Promise<string> {
    const existing = await this.context.secrets.get(CLIENT_KEY_SECRET);
    if (existing && existing.length >= 16) return existing;
    const key = newClientKey();
    await this.context.secrets.store(CLIENT_KEY_SECRET, key);
    return key;
  }

  /**
   * Replaces the local client key: stored in SecretStorage (other windows of the profile adopt it
   * from there), in force at once in this window's engines and proxy checks — requests with the
   * old key get 401 from now on — and in new terminals (onDidChangeClientKey).
   */
  async rotateClientKey(): Promise<void> {
    await this.context.secrets.store(CLIENT_KEY_SECRET, newClientKey());
    // What is stored now, in case another window rotated at the same moment.
    this.adoptClientKey(await this.context.secrets.get(CLIENT_KEY_SECRET));
  }

  /** Puts a stored key in force here (nothing when it is missing, too short or already in force). */
  private adoptClientKey(key: string | undefined): void {
    if (!key || key.length < 16 || key === this.clientKey || this.disposed) return;
    this.clientKey = key;
    this.real?.router.engine.setClientKey(key);
    if (this.active !== this.real) this.active?.router.engine.setClientKey(key);
    this.proxy?.setClientKey(key);
    this.log.info('client key: a new local key is in force; requests with the previous one are refused');
    this.keyChanged.fire();
    this.changed.fire();
  }

  /** Settings (+ optional config file, over optional `defaults`) → runtime config, or the error naming the setting. */
  async runtimeFromSettings(defaults?: DefaultsLayer): Promise<{ config: RuntimeConfig; sources: Record<string, string> } | { error: string }> {
    const settings = this.settings.host;
    let file: { path: string; routing: RoutingInput | undefined } | undefined;
    if (settings.configFile) {
      const loaded = await loadConfigFile(settings.configFile);
      if (!loaded.ok) return { error: `claudeRouter.configFile: ${loaded.error}` };
      file = { path: settings.configFile, routing: loaded.config.routing };
    }
    const result = policyFromSettings(this.settings.routing, file, process.env, defaults);
    if (!result.ok) return { error: result.error };
    return {
      config: { policy: result.policy, accounts: this.accounts.all(), upstreamBaseUrl: settings.upstreamBaseUrl },
      sources: result.sources,
    };
  }

  /**
   * Applies changed settings or accounts; an invalid value keeps the last good policy and
   * says which setting. Reloads run one after another, so an older one never lands last.
   */
  reloadConfig(): Promise<void> {
    this.reloads = this.reloads.then(() => this.reloadNow()).catch((err: unknown) => this.log.error(`config: ${(err as Error).message}`));
    return this.reloads;
  }

  private async reloadNow(): Promise<void> {
    const real = this.real;
    if (!real) return;
    const next = await this.runtimeFromSettings();
    if ('error' in next) {
      this.lastSettingsError = next.error;
      real.router.engine.reportReloadError(next.error);
      void vscode.window.showErrorMessage(vscode.l10n.t('Claude Router: {0} — the last good routing policy stays in force.', next.error.split('\n')[0]));
    } else {
      this.lastSettingsError = null;
      real.router.engine.applyConfig(next.config, next.sources);
      // Simulated accounts keep their own accounts and upstream, and follow the settings over the demo policy.
      const sim = this.active !== real ? this.active?.router.engine : undefined;
      const demo = sim ? await this.runtimeFromSettings(SIMULATED_POLICY) : undefined;
      if (sim && demo && 'config' in demo) sim.applyConfig({ ...sim.config, policy: demo.config.policy }, demo.sources);
    }
    this.changed.fire();
  }

  /**
   * A credential in SecretStorage changed — a sign-in in this profile (any window), or a router's
   * own write of a refreshed pair. Only news (credentialNews) is re-read and lifts needs-sign-in; a
   * sign-in goes to the shared pool.
   */
  private async credentialChanged(label: string): Promise<void> {
    const router = this.real?.router;
    if (!router || !(await credentialNews(label, this.store, router.tokens, this.pool?.credentials))) return;
    router.tokens.invalidate(label);
    router.state.clearNeedsSignIn(label);
    this.changed.fire();
  }

  private async createRealEngine(): Promise<EngineSet> {
    const dir = this.context.globalStorageUri.fsPath;
    const first = await this.runtimeFromSettings();
    let config: RuntimeConfig;
    let sources: Record<string, string> = {};
    if ('error' in first) {
      this.lastSettingsError = first.error;
      void vscode.window.showErrorMessage(vscode.l10n.t('Claude Router: {0} — using the default routing policy.', first.error.split('\n')[0]));
      const fallback = await this.runtimeFromSettingsDefaults();
      config = fallback;
    } else {
      config = first.config;
      sources = first.sources;
    }
    const storeUrl = this.settings.host.stateStore;
    this.pool = storeUrl ? await openSharedStore(storeUrl, this.context, this.store, this.log) : undefined;
    const pool = this.pool;
    const router = await createRouter({
      config,
      sources,
      credentials: pool?.credentials ?? this.store,
      store: pool?.connection,
      tokenUrl: this.settings.host.tokenUrl,
      clientKey: this.clientKey,
      log: this.log,
      decisionDir: dir,
      stateFile: path.join(dir, 'router-state.json'),
      // Saved only while this window leads (onRole): a following window's copy goes stale.
      saveState: false,
    });
    if (this.lastSettingsError) router.engine.reportReloadError(this.lastSettingsError);
    return {
      router,
      simulated: undefined,
      decisionDir: dir,
      close: async () => {
        await router.close();
        await pool?.close();
      },
    };
  }

  private async runtimeFromSettingsDefaults(): Promise<RuntimeConfig> {
    const result = policyFromSettings({}, undefined, process.env);
    if (!result.ok) throw new Error(result.error);
    return { policy: result.policy, accounts: this.accounts.all(), upstreamBaseUrl: this.settings.host.upstreamBaseUrl };
  }

  /**
   * An account whose secret did not survive a restart (no keyring) is flagged as needing sign-in
   * (the sign-in alert asks the user, alerts.ts) — never a fallback to settings.
   */
  private async checkMissingSecrets(): Promise<void> {
    for (const a of this.accounts.all()) {
      if (!(await this.store.get(a.label))) this.real?.router.state.markNeedsSignIn(a.label, 'its credentials did not survive the restart — no system keyring?');
    }
  }

  /** Switches this window's proxy to a fake upstream with simulated accounts. */
  startSimulated(): Promise<void> {
    const run = this.modeSwitch.then(() => this.startSimulatedNow());
    this.modeSwitch = run.catch(() => undefined);
    return run;
  }

  private async startSimulatedNow(): Promise<void> {
    if (this.simulated || this.disposed) return;
    if (this.role.kind !== 'leader') throw new Error(vscode.l10n.t('another VS Code window serves the proxy; try simulated accounts there'));
    // With settings that do not validate, the last good policy (the real engine's) serves them too.
    const demo = await this.runtimeFromSettings(SIMULATED_POLICY);
    const real = this.real!.router.engine;
    const decisionDir = mkdtempSync(path.join(os.tmpdir(), 'claude-router-simulated-'));
    const [policy, sources] = 'config' in demo ? [demo.config.policy, demo.sources] : [real.config.policy, real.configStatus.sources];
    const sim = await startFakeUpstream({ accounts: [...SIMULATED_ACCOUNTS], sseIntervalMs: 15, sseDeltaCount: 12 });
    const store = new MemoryCredentialStore();
    for (const a of SIMULATED_ACCOUNTS) await store.set(a.label, { accessToken: a.accessToken, refreshToken: a.refreshToken, grantedAtMs: Date.now() });
    const accounts: AccountInfo[] = SIMULATED_ACCOUNTS.map((a) => ({ label: a.label, kind: 'oauth', fallback: false, enabled: true }));
    const router = await createRouter({
      config: { policy, accounts, upstreamBaseUrl: sim.url },
      sources,
      credentials: store,
      tokenUrl: sim.tokenUrl,
      clientKey: this.clientKey,
      log: this.log,
      decisionDir,
    });
    for (let i = 0; i < accounts.length; i++) await router.poller.tick(); // show utilisation at once
    const onChanged = () => this.changed.fire();
    router.state.events.on('changed', onChanged);
    this.active = {
      router,
      simulated: sim,
      decisionDir,
      stopping: new AbortController(),
      close: async () => {
        router.state.events.off('changed', onChanged);
        await router.close();
        await sim.close();
      },
    };
    this.proxy!.setEngine(router.engine);
    this.log.info(`simulated accounts: ${accounts.map((a) => a.label).join(', ')} behind a fake upstream at ${sim.url}`);
    this.changed.fire();
  }

  stopSimulated(): Promise<void> {
    const run = this.modeSwitch.then(() => this.stopSimulatedNow());
    this.modeSwitch = run.catch(() => undefined);
    return run;
  }

  private async stopSimulatedNow(): Promise<void> {
    const sim = this.active;
    if (!sim?.simulated || !this.real) return;
    sim.stopping?.abort();
    this.active = this.real;
    this.proxy!.setEngine(this.real.router.engine);
    await sim.close();
    this.changed.fire();
  }

  /** Recent decisions of this window's active engine, oldest first. */
  recentDecisions(limit: number) {
    return this.active?.router.engine.recentDecisions(limit) ?? [];
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await this.modeSwitch;
    // Saved before the port is released: the window that takes over loads this state, and owns
    // the file from then on (a later save of ours could bring back what it has since cleared).
    await this.real?.router.persistence?.flush();
    this.real?.router.persistence?.follow();
    await this.proxy?.dispose();
    await this.real?.router.persistence?.handOver(); // what the requests ending in the grace time changed
    if (this.active && this.active !== this.real) await this.active.close();
    await this.real?.close();
    await this.disposables.dispose();
  }
}
