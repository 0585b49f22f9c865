/**
 * Composition root: builds the few long-lived objects, wires them, registers
 * every disposable, and returns a small API (used by the integration tests).
 */
import * as vscode from 'vscode';
import { registerSharedStoreCommands } from './sharedStore';
import { existsSync } from 'node:fs';
import { registerAccountCommands } from './accountCommands';
import { registerCooldownCommand } from './cooldownCommand';
import { AlertController } from './alerts';
import { channelLogger } from './log';
import { logUnhandledRejections } from '../proxy/log';
import { RouterModel } from './routerModel';
import { RouterService } from './routerService';
import { SettingsService } from './settings';
import { registerSimulatedCommands } from './simulatedCommands';
import { StatusBarController } from './statusBar';
import { StatusPanel } from './statusPanel';
import { copyTerminalEnvironment } from './terminalEnv';
import { chooseStrategy } from './strategyCommand';
import { comparePolicies } from './comparePolicies';
import { TerminalEnvironment } from './terminalEnv';
import { AccountsTreeProvider, SessionsTreeProvider } from './treeViews';

/** What `activate` returns. */
export interface ClaudeRouterApi {
  service: RouterService;
  model: RouterModel;
  alerts: AlertController;
  /** The proxy URL terminals use. */
  url(): string;
  clientKey(): string;
}

let service: RouterService | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<ClaudeRouterApi> {
  const channel = vscode.window.createOutputChannel('Claude Router', { log: true });
  context.subscriptions.push(channel);
  const log = channelLogger(channel);
  // Last resort: a stray rejection of the router is logged to its channel; the extension host goes on (nothing here exits).
  const stopLogging = logUnhandledRejections(log);
  context.subscriptions.push({ dispose: stopLogging });

  const settings = new SettingsService();
  context.subscriptions.push(settings);
  service = new RouterService(context, log, settings);
  const svc = service;
  await svc.start();
  const model = new RouterModel(svc);
  context.subscriptions.push(model);

  const accountsTree = new AccountsTreeProvider(model);
  const accountsView = vscode.window.createTreeView('claudeRouter.accounts', { treeDataProvider: accountsTree, showCollapseAll: true });
  const sessionsTree = new SessionsTreeProvider(model);
  const sessionsView = vscode.window.createTreeView('claudeRouter.sessions', { treeDataProvider: sessionsTree });
  const alerts = new AlertController(model, svc, channel, context.globalState);
  context.subscriptions.push(accountsTree, accountsView, sessionsTree, sessionsView, new StatusBarController(model, svc), alerts);
  const updateBadges = () => {
    const s = model.status;
    accountsView.message = svc.simulated
      ? vscode.l10n.t('Simulated accounts — "Stop Simulated Accounts" returns to yours.')
      : model.error && model.error !== 'starting'
        ? model.error
        : undefined;
    sessionsView.description = s ? `${s.sessions.length}` : undefined;
  };
  context.subscriptions.push(model.onDidChange(updateBadges));

  // New terminals get the router's environment only while this window leads or follows a leader
  // that proved it knows the key; a port held by another program gets neither key nor traffic.
  const terminalEnv = new TerminalEnvironment(context.environmentVariableCollection);
  const applyEnv = () => terminalEnv.update(svc.role, svc.url, svc.clientKey, settings.host.terminalEnabled, settings.host.subscriptionType);
  applyEnv();
  context.subscriptions.push(
    svc.onDidChangeRole(applyEnv),
    svc.onDidChangeClientKey(applyEnv),
    settings.onDidChange((e) => {
      if (settings.changed(e, 'terminal') || settings.changed(e, 'port')) applyEnv();
    }),
  );

  const cmd = (id: string, fn: (...args: unknown[]) => unknown) => context.subscriptions.push(vscode.commands.registerCommand(`claudeRouter.${id}`, fn));
  cmd('showStatus', () => StatusPanel.show(context.extensionUri, model, svc));
  cmd('refresh', () => model.refresh());
  cmd('openDecisionLog', async () => {
    const file = svc.decisionLogFile;
    if (file && existsSync(file)) await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true });
    else void vscode.window.showInformationMessage(vscode.l10n.t('Claude Router: no decision has been logged yet.'));
  });
  cmd('openWalkthrough', () => vscode.commands.executeCommand('workbench.action.openWalkthrough', `${context.extension.id}#claudeRouter.gettingStarted`, false));
  cmd('copyTerminalEnvironment', (shell?: unknown) => copyTerminalEnvironment(svc, shell));
  cmd('chooseStrategy', (strategy?: unknown, ranking?: unknown) => chooseStrategy(svc, strategy, ranking));
  cmd('comparePolicies', (files?: unknown, use?: unknown) => comparePolicies(context, svc, files, use));
  cmd('rotateClientKey', async () => {
    await svc.rotateClientKey();
    void vscode.window.showInformationMessage(
      vscode.l10n.t(
        'Claude Router: the local client key was replaced; the old one is refused from now on. New terminals get the new key — restart "claude" from a new terminal, and copy the terminal environment again for external terminals.',
      ),
    );
  });
  context.subscriptions.push(
    ...registerAccountCommands(svc),
    registerCooldownCommand(svc),
    ...registerSimulatedCommands(svc, () => StatusPanel.show(context.extensionUri, model, svc)),
    ...registerSharedStoreCommands(context.secrets),
  );
  context.subscriptions.push(StatusPanel.register(context.extensionUri, model, svc), { dispose: () => StatusPanel.current?.dispose() });

  return { service: svc, model, alerts, url: () => svc.url, clientKey: () => svc.clientKey };
}

export async function deactivate(): Promise<void> {
  await service?.dispose();
  service = undefined;
}
