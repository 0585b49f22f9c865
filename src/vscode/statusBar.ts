/**
 * The status bar item: usable/total accounts and the best headroom at a
 * glance (`$(server-process) 2/3 · 62%`), warning colour at ≤ 1 usable
 * account, error colour at none; a tooltip with one line per account; a click
 * opens "Show Routing Status".
 */
import * as vscode from 'vscode';
import { percent, poolSummary } from '../proxy/status/statusView';
import { poolTooltip } from '../proxy/status/tooltips';
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
    const head = `${sim} — ${usable} of ${total} accounts usable${bestHeadroom !== null ? `, best headroom ${percent(bestHeadroom)}` : ''}`;
    // Theme icons on: the builder escapes every `$(` that is not one of its own.
    this.item.tooltip = new vscode.MarkdownString(poolTooltip(s, head, this.roleLine(), Date.now()), true);
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
