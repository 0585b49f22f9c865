/**
 * The alerts that matter, each once per episode and with an action (episodes: src/proxy/status/alerts.ts):
 * - an account needs sign-in → Sign In;
 * - an account's sign-in is `routing.grant-warn-days` old (once per account and grant) → Sign In;
 * - every account of the pool is used up → until when, in local time → Show Status;
 * - another program holds the port (new terminals then get no router environment, terminalEnv.ts)
 *   → Use Another Port, or Show What Holds It (its process name and id in the log).
 */
import * as vscode from 'vscode';
import { createServer } from 'node:net';
import findProcess from 'find-process';
import { formatDuration } from '../quota/duration';
import { AlertEpisodes, type Alert } from '../proxy/status/alerts';
import type { ProxyRole } from '../proxy/http/sharedProxy';
import type { RouterModel } from './routerModel';
import type { RouterService } from './routerService';

/** `14:05`, or `Fri 14:05` when not today (the extension host's local time). */
function localClock(ms: number, now: number): string {
  const at = new Date(ms);
  const time = at.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', hour12: false });
  return at.toDateString() === new Date(now).toDateString() ? time : `${at.toLocaleDateString(undefined, { weekday: 'short' })} ${time}`;
}

/** A free loopback port (the system picks it; it may be taken again before it is used). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** The globalState key of the grants warned about (src/proxy/status/alerts.ts `warnedGrants`): once per grant, across restarts. */
const WARNED_GRANTS_KEY = 'claudeRouter.warnedGrants';
/** At most this many are kept (the newest): a grant is renewed within weeks, so old keys are dead. */
const WARNED_GRANTS_MAX = 200;

export class AlertController implements vscode.Disposable {
  private readonly episodes: AlertEpisodes;
  private readonly subscriptions: vscode.Disposable[];
  /** The messages shown so far in this window, oldest first (for the extension's tests). */
  readonly shown: string[] = [];
  /** Each shown message's action, by message: what its buttons do. */
  private readonly actions = new Map<string, (choice: string) => unknown>();

  constructor(
    private readonly model: RouterModel,
    private readonly service: RouterService,
    private readonly channel: vscode.LogOutputChannel,
    /** Where the grants warned about are kept (the extension's globalState); absent: this window's run only. */
    private readonly memory?: vscode.Memento,
  ) {
    this.episodes = new AlertEpisodes(memory?.get<string[]>(WARNED_GRANTS_KEY) ?? []);
    this.subscriptions = [model.onDidChange(() => this.onModel()), service.onDidChangeRole((role) => this.onRole(role))];
    this.onRole(service.role);
  }

  private onModel(): void {
    const s = this.model.status;
    if (!s) return;
    const now = Date.now();
    for (const alert of this.episodes.next(s, now)) this.show(alert, now);
  }

  private show(alert: Alert, now: number): void {
    switch (alert.kind) {
      case 'needs_sign_in': {
        const [first] = alert.accounts;
        const who =
          alert.accounts.length === 1
            ? vscode.l10n.t('Claude Router: "{0}" needs you to sign in again ({1}).', first.label, first.reason)
            : vscode.l10n.t('Claude Router: {0} need you to sign in again.', alert.accounts.map((a) => `"${a.label}"`).join(', '));
        const others = (this.model.status?.usableAccounts ?? 0) > 0 ? ` ${vscode.l10n.t('Requests go to the other accounts meanwhile.')}` : '';
        this.notify('warning', `${who}${others}`, [vscode.l10n.t('Sign In')], () => vscode.commands.executeCommand('claudeRouter.signInAgain', first.label));
        return;
      }
      case 'grant_old': {
        const message = vscode.l10n.t(
          'Claude Router: "{0}" was signed in {1} days ago. Its refresh chain reportedly ends about 28–29 days after sign-in; sign in again to renew it before requests to it fail.',
          alert.label,
          alert.ageDays,
        );
        this.notify('warning', message, [vscode.l10n.t('Sign In')], () => vscode.commands.executeCommand('claudeRouter.signInAgain', alert.label));
        void this.memory?.update(WARNED_GRANTS_KEY, this.episodes.warnedGrants().slice(-WARNED_GRANTS_MAX));
        return;
      }
      case 'pool_exhausted': {
        const one = alert.total === 1;
        const at = alert.untilMs === null ? '' : localClock(alert.untilMs, now);
        const wait = alert.untilMs === null ? '' : formatDuration((alert.untilMs - now) / 1000);
        const until =
          alert.untilMs === null
            ? vscode.l10n.t('When one recovers is unknown ("{0}": {1}) — sign in or wait for fresh quota data.', alert.account, alert.what)
            : one
              ? vscode.l10n.t('It is usable again at {0}, in {1} ({2}).', at, wait, alert.what)
              : vscode.l10n.t('The first, "{0}", is usable again at {1}, in {2} ({3}).', alert.account, at, wait, alert.what);
        const what = alert.upstreamTrouble
          ? one
            ? vscode.l10n.t('Anthropic is overloaded or failing: the only account is pausing.')
            : vscode.l10n.t('Anthropic is overloaded or failing: all {0} accounts are pausing.', alert.total)
          : one
            ? vscode.l10n.t('The only account is used up.')
            : vscode.l10n.t('All {0} accounts are used up.', alert.total);
        this.notify('warning', vscode.l10n.t('Claude Router: {0} {1} Until then Claude Code gets "rate limited" answers.', what, until), [vscode.l10n.t('Show Status')], () =>
          vscode.commands.executeCommand('claudeRouter.showStatus'),
        );
        return;
      }
    }
  }

  /** One alert per change into a blocked port (the proxy announces the same role only once, however often its retry finds the port taken). */
  private onRole(role: ProxyRole): void {
    if (role.kind !== 'blocked') return;
    const port = this.service.settings.host.port;
    const another = vscode.l10n.t('Use Another Port');
    this.notify(
      'warning',
      vscode.l10n.t('Claude Router: {0}. New terminals are not sent through the router until the port is free or another is chosen.', role.reason),
      [another, vscode.l10n.t('Show What Holds It')],
      (choice) => (choice === another ? this.useAnotherPort() : this.showHolder(port)),
    );
  }

  /**
   * Does what a click on `choice` of the alert `message` does (the extension's tests: a
   * notification's buttons cannot be clicked from the extension host).
   * @returns what the action returns, awaited; undefined for a message never shown
   */
  async choose(message: string, choice: string): Promise<unknown> {
    return this.actions.get(message)?.(choice);
  }

  private notify(severity: 'warning' | 'error', message: string, actions: string[], act: (choice: string) => unknown): void {
    this.shown.push(message);
    this.actions.set(message, act);
    const show = severity === 'warning' ? vscode.window.showWarningMessage : vscode.window.showErrorMessage;
    void show(message, ...actions).then((choice) => (choice ? act(choice) : undefined));
  }

  /** Offers a free port and writes it to `claudeRouter.port` (the settings handler then offers the reload). */
  private async useAnotherPort(): Promise<void> {
    const suggested = await freePort().catch(() => undefined);
    const value = await vscode.window.showInputBox({
      title: vscode.l10n.t('Claude Router: port'),
      prompt: vscode.l10n.t('A loopback port for the router (all your VS Code windows share it); takes effect after a window reload'),
      value: suggested ? String(suggested) : '',
      validateInput: (v) => (/^\d+$/.test(v.trim()) && Number(v) >= 1024 && Number(v) <= 65535 ? undefined : vscode.l10n.t('a port number from 1024 to 65535')),
    });
    if (value) await vscode.workspace.getConfiguration('claudeRouter').update('port', Number(value), vscode.ConfigurationTarget.Global);
  }

  /** Logs which process listens on `port` (name and id only: a command line can hold secrets). */
  private async showHolder(port: number): Promise<void> {
    try {
      const holders = await findProcess('port', port);
      this.channel.warn(
        holders.length
          ? `port ${port} is held by ${holders.map((p) => `${p.name} (process ${p.pid})`).join(', ')}`
          : `port ${port}: no process listening on it was found (it may be another user's, or gone by now)`,
      );
    } catch (err) {
      this.channel.warn(`port ${port}: could not find which process holds it: ${(err as Error).message}`);
    }
    this.channel.show();
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}
