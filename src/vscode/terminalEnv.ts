/**
 * Integrated terminals get the environment that sends Claude Code through the
 * router (see src/proxy/http/clientEnv.ts for why these variables). The
 * collection is persistent, so the port must stay stable; a setting
 * (`claudeRouter.terminal.enabled`) turns it off.
 */
import * as vscode from 'vscode';
import { claudeCodeEnvironment } from '../proxy/http/clientEnv';

export function applyTerminalEnvironment(collection: vscode.GlobalEnvironmentVariableCollection, url: string, clientKey: string, enabled: boolean): void {
  collection.clear();
  collection.description = enabled ? new vscode.MarkdownString('Claude Router: sends Claude Code through the local account router (`ANTHROPIC_BASE_URL`, local key).') : undefined;
  if (!enabled) return;
  for (const [name, value] of Object.entries(claudeCodeEnvironment(url, clientKey))) collection.replace(name, value);
}
