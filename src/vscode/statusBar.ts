/**
 * The status bar item: usable/total accounts and the best headroom at a
 * glance (`$(server-process) 2/3 · 62%`), warning colour at ≤ 1 usable
 * account, error colour at none; a tooltip with one line per account; a click
 * opens "Show Routing Status".
 */
import * as vscode from 'vscode';
import { accountDescription, accountState, percent, poolSummary } from '../proxy/status/statusView';
import type { RouterModel } from './routerModel';
import type { RouterService } from './routerService';

export class StatusBarController implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly model: RouterModel,
    private readonly service: RouterService,
  ) {
    this.item = vscode.window.createStatusBarItem('claudeRouter.pool', vscode.StatusBarAlignment.Left, 50);
    this.item.name = 'Claude Router';
    this.item.command = 'claudeRouter.showStatus';
    this.subscription = model.onDidChange(() => this.render());
    this.render();
    this.item.show();
  }

  render(): void {
    const s = this.model.status;
    if (!s) {
      this.item.text = '$(server-process) Claude Router';
      this.item.tooltip = this.model.error ?? 'Starting…';
      this.item.backgroundColor = undefined;
      return;
    }
    const { usable, total, bestHeadroom } = poolSummary(s);
    const sim = this.service.simulated ? ' (simulated)' : '';
    this.item.text = `$(server-process) ${usable}/${total}${bestHeadroom !== null ? ` · ${percent(bestHeadroom)}` : ''}${sim}`;
    this.item.backgroundColor =
      total > 0 && usable === 0 ? new vscode.ThemeColor('statusBarItem.errorBackground') : usable <= 1 ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    const now = Date.now();
    const md = new vscode.MarkdownString(undefined, true);
    md.appendMarkdown(`**Claude Router**${sim} — ${usable} of ${total} accounts usable`);
    if (bestHeadroom !== null) md.appendMarkdown(`, best headroom ${percent(bestHeadroom)}`);
    md.appendMarkdown('\n\n');
    for (const a of s.accounts) {
      md.appendMarkdown(`- $(${ICONS[accountState(a, s)]}) **${escape(a.label)}** — ${escape(accountDescription(a, now))}\n`);
    }
    md.appendMarkdown(`\n${this.roleLine()} · click for routing status`);
    this.item.tooltip = md;
  }

  private roleLine(): string {
    const role = this.service.role;
    if (role.kind === 'leader') return `serving at ${role.url}`;
    if (role.kind === 'follower') return `another window serves at ${role.url}`;
    return role.kind;
  }

  dispose(): void {
    this.subscription.dispose();
    this.item.dispose();
  }
}

/** Codicons per account state (shared with the tree view). */
export const ICONS: Record<ReturnType<typeof accountState>, string> = {
  serving: 'pass-filled',
  usable: 'pass',
  cooling: 'watch',
  saturated: 'warning',
  needs_sign_in: 'key',
  disabled: 'circle-slash',
};

function escape(s: string): string {
  return s.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, (c) => `\\${c}`);
}
