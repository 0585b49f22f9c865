/**
 * Integrated terminals get the environment that sends Claude Code through the
 * router (see src/proxy/http/clientEnv.ts for why these variables) — but only
 * while this window leads the proxy or follows a leader that proved it knows
 * the key: a port held by another program gets no key and no traffic from new
 * terminals. The collection is persistent, so the port must stay stable; a
 * setting (`claudeRouter.terminal.enabled`) turns it off.
 */
import * as vscode from 'vscode';
import { claudeCodeEnvironment, shellExports, type ShellKind } from '../proxy/http/clientEnv';
import type { ProxyRole } from '../proxy/http/sharedProxy';
import type { SubscriptionType } from '../config/schema';
import type { RouterService } from './routerService';

/**
 * What the terminal environment should do for a role: `apply` when this window leads or follows a
 * verified leader, `clear` when the port is blocked (another program holds it, or it cannot be
 * bound), `keep` while the proxy is starting or stopped (nothing was decided, or the window closes).
 */
export function terminalEnvAction(role: ProxyRole): 'apply' | 'clear' | 'keep' {
  switch (role.kind) {
    case 'leader':
    case 'follower':
      return 'apply';
    case 'blocked':
      return 'clear';
    case 'starting':
    case 'stopped':
      return 'keep';
  }
}

/** Sets the collection to `env`, or clears it (null). */
export function applyTerminalEnvironment(collection: vscode.GlobalEnvironmentVariableCollection, env: Record<string, string> | null): void {
  collection.clear();
  collection.description = env
    ? new vscode.MarkdownString(vscode.l10n.t('Claude Router: sends Claude Code through the local account router (`ANTHROPIC_BASE_URL`, local key).'))
    : undefined;
  for (const [name, value] of Object.entries(env ?? {})) collection.replace(name, value);
}

/** The terminal environment of this window, kept in step with the proxy role, the key and the settings. */
export class TerminalEnvironment {
  /** What is in the collection now (JSON of the variables), or null when cleared; undefined before the first decision. */
  private applied: string | null | undefined;

  constructor(private readonly collection: vscode.GlobalEnvironmentVariableCollection) {}

  /**
   * Applies the environment for `role` (see {@link terminalEnvAction}); writes the collection
   * only when what it should hold changed, so terminals are not told to relaunch for nothing.
   */
  update(role: ProxyRole, url: string, clientKey: string, enabled: boolean, subscriptionType: SubscriptionType): void {
    const action = terminalEnvAction(role);
    if (action === 'keep') return;
    const env = action === 'apply' && enabled ? claudeCodeEnvironment(url, clientKey, subscriptionType, process.env) : null;
    const want = env && JSON.stringify(env);
    if (want === this.applied) return;
    this.applied = want;
    applyTerminalEnvironment(this.collection, env);
  }
}

const SHELLS: Array<{ shell: ShellKind; label: string; detail: string }> = [
  { shell: 'posix', label: 'bash, zsh, sh', detail: "export NAME='value'" },
  { shell: 'powershell', label: 'PowerShell', detail: "$env:NAME = 'value'" },
  { shell: 'cmd', label: vscode.l10n.t('Command Prompt (cmd)'), detail: 'set "NAME=value"' },
];

/**
 * "Copy Terminal Environment for an External Terminal": the same variables as an integrated
 * terminal gets, in the syntax of the shell the user picks (PowerShell first on Windows); `shell`
 * (`posix`, `powershell`, `cmd`) skips the pick. Resolves with the text copied, or undefined.
 */
export async function copyTerminalEnvironment(service: RouterService, shell?: unknown): Promise<string | undefined> {
  const order = process.platform === 'win32' ? [SHELLS[1], SHELLS[2], SHELLS[0]] : SHELLS;
  const kind =
    SHELLS.find((s) => s.shell === shell)?.shell ?? (await vscode.window.showQuickPick(order, { placeHolder: vscode.l10n.t('Which shell is the terminal running?') }))?.shell;
  if (!kind) return undefined;
  const text = `${shellExports(claudeCodeEnvironment(service.url, service.clientKey, service.settings.host.subscriptionType, process.env), kind)}\n`;
  await vscode.env.clipboard.writeText(text);
  void vscode.window.showInformationMessage(
    vscode.l10n.t('Claude Router: the terminal environment is on the clipboard (it contains the local key; paste it only into your own shell).'),
  );
  return text;
}
