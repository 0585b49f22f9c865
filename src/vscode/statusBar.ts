/**
 * The status bar item: usable/total accounts and the best headroom at a
 * glance (`$(server-process) 2/3 usable · 62% left`), as decided by the pure
 * `statusBarView`: neutral with no accounts (a "set up" entry that opens the
 * Accounts view), warning colour when fewer than two of several accounts are
 * usable, error colour at none; a tooltip with one line per account; a click
 * opens "Show Routing Status".
 */
import * as vscode from 'vscode';
import { statusBarView, type StatusBarSeverity } from '../proxy/status/statusBarView';
import { poolSummary } from '../proxy/status/statusView';
import { poolTooltip } from '../proxy/status/tooltips';
import type { RouterModel } from './routerModel';
import type { RouterService } from './routerService';

/** With no account yet, the item opens the Accounts view, whose welcome offers sign-in and simulated accounts. */
const SET_UP_COMMAND = 'claudeRouter.accounts.focus';

const BACKGROUND: Record<StatusBarSeverity, vscode.ThemeColor | undefined> = {
  normal: undefined,
  warning: new vscode.ThemeColor('statusBarItem.warningBackground'),
  error: new vscode.ThemeColor('statusBarItem.errorBackground'),
};

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
      this.item.command = 'claudeRouter.showStatus';
      this.item.tooltip = this.model.error ?? vscode.l10n.t('Starting…');
      this.item.backgroundColor = undefined;
      this.item.accessibilityInformation = { label: `Claude Router: ${this.model.error ?? vscode.l10n.t('starting')}` };
      return;
    }
    const view = statusBarView({ ...poolSummary(s), configured: s.accounts.length, simulated: this.service.simulated, storeUnreachable: s.store?.state === 'unreachable' });
    this.item.text = view.text;
    this.item.command = view.setUp ? SET_UP_COMMAND : 'claudeRouter.showStatus';
    this.item.backgroundColor = BACKGROUND[view.severity];
    this.item.accessibilityInformation = { label: view.ariaLabel };
    if (view.setUp) {
      this.item.tooltip = `Claude Router${view.head}`;
      return;
    }
    // Theme icons on: the builder escapes every `$(` that is not one of its own.
    this.item.tooltip = new vscode.MarkdownString(poolTooltip(s, view.head, this.roleLine(), Date.now()), true);
  }

  private roleLine(): string {
    const role = this.service.role;
    if (role.kind === 'leader') return vscode.l10n.t('serving at {0}', role.url);
    if (role.kind === 'follower') return vscode.l10n.t('another window serves at {0}', role.url);
    return role.kind;
  }

  dispose(): void {
    this.subscription.dispose();
    this.item.dispose();
  }
}
