/**
 * Integrated terminals get the environment that sends Claude Code through the
 * router (see src/proxy/http/clientEnv.ts for why these variables) — but only
 * while this window leads the proxy or follows a leader that proved it knows
 * the key: a port held by another program gets no key and no traffic from new
 * terminals. The collection is persistent, so the port must stay stable; a
 * setting (`claudeRouter.terminal.enabled`) turns it off.
 */
import * as vscode from 'vscode';
import { claudeCodeEnvironment } from '../proxy/http/clientEnv';
import type { ProxyRole } from '../proxy/http/sharedProxy';

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

/** Sets (or clears) the collection; `enabled` false clears it. */
export function applyTerminalEnvironment(collection: vscode.GlobalEnvironmentVariableCollection, url: string, clientKey: string, enabled: boolean): void {
  collection.clear();
  collection.description = enabled ? new vscode.MarkdownString('Claude Router: sends Claude Code through the local account router (`ANTHROPIC_BASE_URL`, local key).') : undefined;
  if (!enabled) return;
  for (const [name, value] of Object.entries(claudeCodeEnvironment(url, clientKey))) collection.replace(name, value);
}

/** The terminal environment of this window, kept in step with the proxy role, the key and the settings. */
export class TerminalEnvironment {
  /** What is in the collection now: the URL and key applied, or null when cleared; undefined before the first decision. */
  private applied: { url: string; key: string } | null | undefined;

  constructor(private readonly collection: vscode.GlobalEnvironmentVariableCollection) {}

  /**
   * Applies the environment for `role` (see {@link terminalEnvAction}); writes the collection
   * only when what it should hold changed, so terminals are not told to relaunch for nothing.
   */
  update(role: ProxyRole, url: string, clientKey: string, enabled: boolean): void {
    const action = terminalEnvAction(role);
    if (action === 'keep') return;
    const want = action === 'apply' && enabled ? { url, key: clientKey } : null;
    const same = want === null ? this.applied === null : this.applied?.url === url && this.applied.key === clientKey;
    if (same) return;
    this.applied = want;
    applyTerminalEnvironment(this.collection, url, clientKey, want !== null);
  }
}
