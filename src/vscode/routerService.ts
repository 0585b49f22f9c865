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
import { MemoryCredentialStore } from '../accounts/memoryCredentialStore';
import { oauthRefresher } from '../accounts/oauth';
import { TokenManager } from '../accounts/tokenManager';
import { UsagePoller } from '../accounts/usagePoller';
import type { AccountInfo, CredentialStore } from '../accounts/types';
import { loadConfigFile } from '../config/load';
import { DEFAULT_SERVER_SETTINGS, type RoutingInput } from '../config/schema';
import { policyFromSettings, ROUTING_SETTING_KEYS } from '../config/settingsPolicy';
import { DEMO_ACCOUNTS, startFakeUpstream, type FakeUpstream } from '../sim';
import { DecisionLog } from '../proxy/state/decisionLog';
import { RouterEngine } from '../proxy/engine';
import type { RuntimeConfig } from '../proxy/runtimeConfig';
import { tokenSaveLog, type Logger } from '../proxy/log';
import { RouterState } from '../proxy/state/routerState';
import { SharedProxy, type ProxyRole } from '../proxy/http/sharedProxy';
import { persistState, type StatePersistence } from '../proxy/state/persistence';
import { AccountList, ACCOUNTS_VERSION_KEY } from './accountList';
import { credentialKey, SecretCredentialStore } from './secretCredentialStore';
import { DisposableStore } from './lifecycle';

const CLIENT_KEY_SECRET = 'claudeRouter.clientKey';

/** The settings this service reads (all application-scoped where they decide where tokens go). */
export interface HostSettings {
  port: number;
  upstreamBaseUrl: string;
  tokenUrl: string;
  configFile: string;
}

/** One running engine with what it owns. */
interface EngineSet {
  engine: RouterEngine;
  state: RouterState;
  tokens: TokenManager;
  poller: UsagePoller;
  close(): Promise<void>;
  simulated: FakeUpstream | undefined;
}

export class RouterService {
  private readonly disposables = new DisposableStore();
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when the engine, its configuration, the proxy role or the account list changed. */
  readonly onDidChange = this.changed.event;
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
  clientKey = '';

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: Logger,
  ) {
    this.accounts = this.disposables.add(new AccountList(context.globalState, context.secrets));
    this.store = new SecretCredentialStore(context.secrets, () => this.accounts.all().map((a) => a.label));
    this.disposables.add(this.changed);
  }

  /** The engine of this window (only meaningful while this window leads the proxy). */
  get engine(): RouterEngine | undefined {
    return this.active?.engine;
  }

  get role(): ProxyRole {
    return this.proxy?.role ?? { kind: 'starting' };
  }

  get simulated(): boolean {
    return this.active?.simulated !== undefined;
  }

  /** The proxy URL clients should use. */
  get url(): string {
    return `http://127.0.0.1:${this.hostSettings().port}`;
  }

  get settingsError(): string | null {
    return this.lastSettingsError;
  }

  hostSettings(): HostSettings {
    const c = vscode.workspace.getConfiguration('claudeRouter');
    return {
      port: c.get<number>('port', DEFAULT_SERVER_SETTINGS.port),
      upstreamBaseUrl: (c.get<string>('upstreamBaseUrl') || DEFAULT_SERVER_SETTINGS.upstreamBaseUrl).replace(/\/+$/, ''),
      tokenUrl: c.get<string>('tokenUrl') || DEFAULT_SERVER_SETTINGS.tokenUrl,
      configFile: c.get<string>('configFile') ?? '',
    };
  }

  async start(): Promise<void> {
    this.clientKey = await this.loadClientKey();
    this.real = await this.createRealEngine();
    this.active = this.real;
    await this.checkMissingSecrets();

    const settings = this.hostSettings();
    this.proxy = new SharedProxy({ host: '127.0.0.1', port: settings.port, clientKey: this.clientKey, log: this.log });
    this.proxy.setEngine(this.active.engine);
    this.proxy.events.on('role', (role: ProxyRole) => {
      if (role.kind === 'leader') this.active?.poller.start();
      else this.active?.poller.stop();
      this.changed.fire();
    });
    this.proxy.events.on('remoteChanged', () => this.changed.fire());
    this.active.engine.state.events.on('changed', () => this.changed.fire());
    await this.proxy.start();

    this.disposables.add(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('claudeRouter.routing') || e.affectsConfiguration('claudeRouter.configFile') || e.affectsConfiguration('claudeRouter.upstreamBaseUrl')) {
          void this.reloadConfig();
        }
        if (e.affectsConfiguration('claudeRouter.port')) {
          void vscode.window.showInformationMessage('Claude Router: the new port is used after a window reload.', 'Reload Window').then((c) => {
            if (c) void vscode.commands.executeCommand('workbench.action.reloadWindow');
          });
        }
      }),
    );
    this.disposables.add(
      this.context.secrets.onDidChange((e) => {
        if (e.key === ACCOUNTS_VERSION_KEY) void this.reloadConfig();
        else if (e.key.startsWith(credentialKey(''))) {
          const label = e.key.slice(credentialKey('').length);
          this.real?.tokens.invalidate(label);
          this.real?.state.clearNeedsSignIn(label);
          this.changed.fire();
        }
      }),
    );
    this.disposables.add(this.accounts.onDidChange(() => void this.reloadConfig()));
  }

  private async loadClientKey(): Promise<string> {
    const existing = await this.context.secrets.get(CLIENT_KEY_SECRET);
    if (existing && existing.length >= 16) return existing;
    const key = `clr-${randomBytes(32).toString('base64url')}`;
    await this.context.secrets.store(CLIENT_KEY_SECRET, key);
    return key;
  }

  /** Settings (+ optional config file) → runtime config, or the error naming the setting. */
  async runtimeFromSettings(): Promise<{ config: RuntimeConfig; sources: Record<string, string> } | { error: string }> {
    const c = vscode.workspace.getConfiguration('claudeRouter.routing');
    const user: Record<string, unknown> = {};
    for (const key of ROUTING_SETTING_KEYS) {
      const i = c.inspect(key);
      const v = i?.globalValue ?? i?.workspaceValue ?? i?.workspaceFolderValue;
      if (v !== undefined) user[key] = v;
    }
    const settings = this.hostSettings();
    let file: { path: string; routing: RoutingInput | undefined } | undefined;
    if (settings.configFile.trim()) {
      const loaded = await loadConfigFile(settings.configFile.trim());
      if (!loaded.ok) return { error: `claudeRouter.configFile: ${loaded.error}` };
      file = { path: settings.configFile.trim(), routing: loaded.config.routing };
    }
    const result = policyFromSettings(user, file, process.env);
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
      real.engine.reportReloadError(next.error);
      void vscode.window.showErrorMessage(`Claude Router: ${next.error.split('\n')[0]} — the last good routing policy stays in force.`);
    } else {
      this.lastSettingsError = null;
      real.engine.applyConfig(next.config, next.sources);
    }
    this.changed.fire();
  }

  private async createRealEngine(): Promise<EngineSet> {
    const dir = this.context.globalStorageUri.fsPath;
    const first = await this.runtimeFromSettings();
    let config: RuntimeConfig;
    let sources: Record<string, string> = {};
    if ('error' in first) {
      this.lastSettingsError = first.error;
      void vscode.window.showErrorMessage(`Claude Router: ${first.error.split('\n')[0]} — using the default routing policy.`);
      const fallback = await this.runtimeFromSettingsDefaults();
      config = fallback;
    } else {
      config = first.config;
      sources = first.sources;
    }
    const state = new RouterState(config.policy.sessionAffinityIdleTtlMs);
    const { restored, saver } = persistState(state, path.join(dir, 'router-state.json'));
    if (restored) this.log.info('state: restored bindings, cooldowns and quota snapshots');
    const decisions = new DecisionLog({ dir, onError: (e) => this.log.warn(`decision log: ${e.message}`) });
    const tokens = new TokenManager(this.store, oauthRefresher(this.hostSettings().tokenUrl), Date.now, tokenSaveLog(this.log));
    const engine = new RouterEngine({ config, state, tokens, decisions, log: this.log, clientKey: this.clientKey, sources });
    if (this.lastSettingsError) engine.reportReloadError(this.lastSettingsError);
    const poller = this.pollerFor(engine, tokens, state);
    return {
      engine,
      state,
      tokens,
      poller,
      simulated: undefined,
      close: async () => {
        poller.stop();
        await engine.close();
        await (saver as StatePersistence).close();
        await decisions.close();
      },
    };
  }

  private async runtimeFromSettingsDefaults(): Promise<RuntimeConfig> {
    const result = policyFromSettings({}, undefined, process.env);
    if (!result.ok) throw new Error(result.error);
    return { policy: result.policy, accounts: this.accounts.all(), upstreamBaseUrl: this.hostSettings().upstreamBaseUrl };
  }

  private pollerFor(engine: RouterEngine, tokens: TokenManager, state: RouterState): UsagePoller {
    return new UsagePoller({
      baseUrl: () => engine.config.upstreamBaseUrl,
      accounts: () => engine.config.accounts.filter((a) => a.enabled && a.kind === 'oauth').map((a) => a.label),
      freshness: (label) => engine.metricsFor(engine.config, null, Date.now()).get(label)?.freshness ?? 'unknown',
      credentials: (label) => tokens.current(label),
      record: (label, snapshot, sentAtMs) => state.recordEvidence(label, snapshot, sentAtMs),
      log: (m) => this.log.info(m),
    });
  }

  /**
   * An account whose secret did not survive a restart (no keyring) is flagged
   * and the user asked to sign in again — never a fallback to settings.
   */
  private async checkMissingSecrets(): Promise<void> {
    const missing: string[] = [];
    for (const a of this.accounts.all()) {
      if (!(await this.store.get(a.label))) {
        missing.push(a.label);
        this.real?.state.markNeedsSignIn(a.label, 'its credentials are missing from the keyring');
      }
    }
    if (missing.length === 0) return;
    // Not awaited: activation must not wait for the user.
    void vscode.window
      .showWarningMessage(
        `Claude Router: the credentials of ${missing.map((m) => `"${m}"`).join(', ')} did not survive the restart (no system keyring?). Sign in again to use ${missing.length > 1 ? 'them' : 'it'}.`,
        'Sign In Again',
      )
      .then((choice) => {
        if (choice) void vscode.commands.executeCommand('claudeRouter.signInAgain', missing[0]);
      });
  }

  /** Switches this window's proxy to a fake upstream with simulated accounts. */
  startSimulated(): Promise<void> {
    const run = this.modeSwitch.then(() => this.startSimulatedNow());
    this.modeSwitch = run.catch(() => undefined);
    return run;
  }

  private async startSimulatedNow(): Promise<void> {
    if (this.simulated || this.disposed) return;
    if (this.role.kind !== 'leader') throw new Error('another VS Code window serves the proxy; try simulated accounts there');
    const sim = await startFakeUpstream({ accounts: DEMO_ACCOUNTS, sseIntervalMs: 15, sseDeltaCount: 12 });
    const store = new MemoryCredentialStore();
    for (const a of DEMO_ACCOUNTS) await store.set(a.label, { accessToken: a.accessToken, refreshToken: a.refreshToken });
    const accounts: AccountInfo[] = DEMO_ACCOUNTS.map((a) => ({ label: a.label, kind: 'oauth', fallback: false, enabled: true }));
    const policy = this.real!.engine.config.policy;
    const state = new RouterState(policy.sessionAffinityIdleTtlMs);
    const tokens = new TokenManager(store, oauthRefresher(sim.tokenUrl));
    const dir = mkdtempSync(path.join(os.tmpdir(), 'claude-router-simulated-'));
    const decisions = new DecisionLog({ dir });
    const engine = new RouterEngine({
      config: { policy, accounts, upstreamBaseUrl: sim.url },
      state,
      tokens,
      decisions,
      log: this.log,
      clientKey: this.clientKey,
      sources: this.real!.engine.configStatus.sources,
    });
    const poller = this.pollerFor(engine, tokens, state);
    for (let i = 0; i < accounts.length; i++) await poller.tick(); // show utilisation at once
    const onChanged = () => this.changed.fire();
    state.events.on('changed', onChanged);
    this.active = {
      engine,
      state,
      tokens,
      poller,
      simulated: sim,
      close: async () => {
        poller.stop();
        state.events.off('changed', onChanged);
        // The engine first: requests still draining may append decisions.
        await engine.close();
        await decisions.close();
        await sim.close();
      },
    };
    this.proxy!.setEngine(engine);
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
    this.active = this.real;
    this.proxy!.setEngine(this.real.engine);
    await sim.close();
    this.changed.fire();
  }

  /** Recent decisions of this window's active engine, oldest first. */
  recentDecisions(limit: number) {
    return this.active?.engine.recentDecisions(limit) ?? [];
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await this.modeSwitch;
    await this.proxy?.dispose();
    if (this.active && this.active !== this.real) await this.active.close();
    await this.real?.close();
    await this.disposables.dispose();
  }
}
