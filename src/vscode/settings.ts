/**
 * The one place that reads `claudeRouter.*` settings: read once per change,
 * validated with the YAML's zod schema (config/settingsPolicy.ts), handed out
 * typed. Consumers handle start-up and changes in one function by asking
 * `changed(event, key)`, where no event means start-up.
 */
import * as vscode from 'vscode';
import { hostSettingsFrom, ROUTING_SETTING_KEYS, type HostSettingsValues } from '../config/settingsPolicy';
import { subscriptionTypeSchema, type SubscriptionType } from '../config/schema';
import { storeUrlProblem } from '../config/storeUrl';

/** Setting sections consumers ask about (under `claudeRouter.`). */
export type SettingsKey = 'port' | 'upstreamBaseUrl' | 'tokenUrl' | 'configFile' | 'terminal' | 'routing' | 'stateStore';

/** The settings that decide where the proxy listens and where tokens go. */
export interface HostSettings extends HostSettingsValues {
  /** `claudeRouter.configFile`, trimmed; '' when unset. */
  configFile: string;
  /** `claudeRouter.stateStore`: the Redis URL of a shared pool (docs/shared-pool.md), trimmed; '' when unset or invalid (then named in `error`). */
  stateStore: string;
  terminalEnabled: boolean;
  /** `claudeRouter.terminal.subscriptionType`: the plan Claude Code is told (`max` when unset or invalid). */
  subscriptionType: SubscriptionType;
  /** Why a host setting was ignored (the default is used), or null. */
  error: string | null;
}

export class SettingsService implements vscode.Disposable {
  private hostCache: HostSettings | undefined;
  private routingCache: Record<string, unknown> | undefined;
  private readonly emitter = new vscode.EventEmitter<vscode.ConfigurationChangeEvent>();
  /** Fires after a `claudeRouter.*` setting changed (the cached values are already dropped). */
  readonly onDidChange = this.emitter.event;
  private readonly subscription: vscode.Disposable;

  constructor() {
    this.subscription = vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration('claudeRouter')) return;
      this.hostCache = undefined;
      this.routingCache = undefined;
      this.emitter.fire(e);
    });
  }

  /** True when `key` is affected by `event`; always true without an event (start-up). */
  changed(event: vscode.ConfigurationChangeEvent | undefined, key: SettingsKey): boolean {
    return event === undefined || event.affectsConfiguration(`claudeRouter.${key}`);
  }

  /** Port, upstream, token endpoint, config file, terminal switch and plan; invalid values replaced by defaults (and named in `error`). */
  get host(): HostSettings {
    if (this.hostCache) return this.hostCache;
    const c = vscode.workspace.getConfiguration('claudeRouter');
    const { settings, error: hostError } = hostSettingsFrom({ port: c.get('port'), upstreamBaseUrl: c.get('upstreamBaseUrl'), tokenUrl: c.get('tokenUrl') });
    const plan = subscriptionTypeSchema.safeParse(c.get('terminal.subscriptionType') ?? 'max');
    const planError = plan.success ? null : vscode.l10n.t('claudeRouter.terminal.subscriptionType: must be "max" or "pro"');
    const storeUrl = (c.get<string>('stateStore') ?? '').trim();
    const storeProblem = storeUrl ? storeUrlProblem(storeUrl) : undefined;
    const storeError = storeProblem ? `claudeRouter.stateStore: ${storeProblem}` : null;
    const error = [hostError, planError, storeError].filter(Boolean).join('\n') || null;
    // Shown once per change: the Settings UI lets anyone type a bad value.
    if (error) void vscode.window.showErrorMessage(vscode.l10n.t('Claude Router: {0} — the default is used.', error.split('\n')[0]));
    this.hostCache = {
      ...settings,
      configFile: (c.get<string>('configFile') ?? '').trim(),
      // An invalid URL shares nothing: this machine's state only (the error says why).
      stateStore: storeProblem ? '' : storeUrl,
      terminalEnabled: c.get<boolean>('terminal.enabled', true),
      subscriptionType: plan.success ? plan.data : 'max',
      error,
    };
    return this.hostCache;
  }

  /**
   * Routing values the user set (user, workspace or folder scope), camelCase keys, unset keys
   * absent. Validated together with the config file by `policyFromSettings`.
   */
  get routing(): Readonly<Record<string, unknown>> {
    if (this.routingCache) return this.routingCache;
    const c = vscode.workspace.getConfiguration('claudeRouter.routing');
    const user: Record<string, unknown> = {};
    for (const key of ROUTING_SETTING_KEYS) {
      const i = c.inspect(key);
      const v = i?.globalValue ?? i?.workspaceValue ?? i?.workspaceFolderValue;
      if (v !== undefined) user[key] = v;
    }
    this.routingCache = user;
    return user;
  }

  /** Sets (or, with undefined, clears) `claudeRouter.routing.primaryAccount` for the user. */
  async setPrimaryAccount(label: string | undefined): Promise<void> {
    await vscode.workspace.getConfiguration('claudeRouter.routing').update('primaryAccount', label, vscode.ConfigurationTarget.Global);
  }

  dispose(): void {
    this.subscription.dispose();
    this.emitter.dispose();
  }
}
