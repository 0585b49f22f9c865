/**
 * The Accounts view (one node per account, children for windows, in-flight
 * requests and bound sessions) and the Sessions view (session, bound account,
 * idle time left). Both redraw when the model changes.
 */
import * as vscode from 'vscode';
import type { AccountReport, StatusReport } from '../proxy/status/status';
import { accountBrief, accountState, candidateText, grantText, grantWarning, percent, reportFigures, statusAndEligibility, timeUntil, whyNow } from '../proxy/status/statusView';
import { accountTooltip, STATE_ICONS, STATE_LABEL } from '../proxy/status/tooltips';
import { formatDuration } from '../quota/duration';
import type { DecisionRecord } from '../routing/decision';
import type { RouterModel } from './routerModel';

type AccountNode = { kind: 'account'; account: AccountReport } | { kind: 'detail'; id: string; label: string; description?: string; icon: string; tooltip?: string };

export class AccountsTreeProvider implements vscode.TreeDataProvider<AccountNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<AccountNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly subscription: vscode.Disposable;

  constructor(private readonly model: RouterModel) {
    this.subscription = model.onDidChange(() => this.emitter.fire(undefined));
  }

  getChildren(node?: AccountNode): AccountNode[] {
    const s = this.model.status;
    if (!s) return [];
    if (!node) return s.accounts.map((account) => ({ kind: 'account', account }));
    if (node.kind !== 'account') return [];
    return details(node.account, s, this.model.decisions, this.model.previewModel);
  }

  getTreeItem(node: AccountNode): vscode.TreeItem {
    if (node.kind === 'detail') {
      const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
      item.id = node.id;
      item.description = node.description;
      item.iconPath = new vscode.ThemeIcon(node.icon);
      item.tooltip = node.tooltip;
      return item;
    }
    const s = this.model.status!;
    const a = node.account;
    const state = accountState(a, s);
    const item = new vscode.TreeItem(a.label, vscode.TreeItemCollapsibleState.Collapsed);
    item.id = `account:${a.label}`;
    // Short enough for the default sidebar width; status, eligibility and countdowns in the tooltip.
    item.description = accountBrief(a);
    item.iconPath = new vscode.ThemeIcon(
      STATE_ICONS[state],
      state === 'needs_sign_in' || state === 'saturated' ? new vscode.ThemeColor('problemsWarningIcon.foreground') : undefined,
    );
    const cooling = a.coolingUntil !== null || Object.keys(a.scopedCoolingUntil ?? {}).length > 0;
    item.contextValue = [
      'account',
      state === 'needs_sign_in' ? 'needsSignIn' : '',
      a.enabled ? '' : 'disabled',
      a.primary ? 'primary' : '',
      a.fallback ? 'fallback' : '',
      cooling ? 'cooling' : '',
    ]
      .filter(Boolean)
      .join('.');
    // Theme icons off: nothing in it is an icon.
    item.tooltip = new vscode.MarkdownString(accountTooltip(a, s, Date.now()));
    item.accessibilityInformation = { label: `${a.label}, ${STATE_LABEL[state]}, ${statusAndEligibility(a, Date.now())}, ${item.description}` };
    return item;
  }

  dispose(): void {
    this.subscription.dispose();
    this.emitter.dispose();
  }
}

/**
 * An account's children: its windows, in-flight requests, bound sessions, its share of the recent
 * requests, and whether a new session would go to it — worked out for `model`, the model of the
 * user's last requests (null: a model-less request).
 */
function details(a: AccountReport, s: StatusReport, decisions: readonly DecisionRecord[], model: string | null): AccountNode[] {
  const now = Date.now();
  const id = (k: string) => `account:${a.label}:${k}`;
  const nodes: AccountNode[] = [
    { kind: 'detail', id: id('5h'), label: vscode.l10n.t('5-hour window'), description: resets(a.session.used, a.session.resetsAt, now), icon: 'clock' },
    { kind: 'detail', id: id('7d'), label: vscode.l10n.t('Weekly window'), description: resets(a.weekly.used, a.weekly.resetsAt, now), icon: 'calendar' },
  ];
  for (const [family, w] of Object.entries(a.scoped)) {
    nodes.push({
      kind: 'detail',
      id: id(`scoped:${family}`),
      label: vscode.l10n.t('Weekly {0}', family),
      description: resets(w.used, w.resetsAt, now),
      icon: 'symbol-class',
    });
  }
  const grant = grantNode(a, id('grant'));
  if (grant) nodes.push(grant);
  nodes.push({ kind: 'detail', id: id('inflight'), label: vscode.l10n.t('In flight'), description: String(a.inflight), icon: 'pulse' });
  const sessions = s.sessions.filter((x) => x.account === a.label);
  nodes.push({
    kind: 'detail',
    id: id('sessions'),
    label: vscode.l10n.t('Bound sessions'),
    // Their requests keep coming here whatever a new session's placement says (session affinity).
    description: sessions.length > 0 ? vscode.l10n.t('{0} · their requests come here (affinity)', sessions.length) : '0',
    icon: 'link',
  });
  const served = decisions.filter((d) => d.servedBy !== null);
  if (served.length)
    nodes.push({
      kind: 'detail',
      id: id('share'),
      label: vscode.l10n.t('Recent requests'),
      description: vscode.l10n.t('{0} of the last {1}', percent(served.filter((d) => d.servedBy === a.label).length / served.length), served.length),
      icon: 'graph',
    });
  const v = s.preview.verdicts.find((x) => x.account === a.label);
  if (v)
    nodes.push({
      kind: 'detail',
      id: id('why'),
      label: v.verdict === 'selected' && a.usable ? vscode.l10n.t('A new session goes here') : vscode.l10n.t('A new session does not go here'),
      description: candidateText(v, reportFigures(a), Date.now()),
      icon: 'info',
      tooltip: `${whyNow(a, s)}${model ? `\n${vscode.l10n.t('Worked out for {0}, the model of your last requests.', model)}` : ''}`,
    });
  // Where a model-scoped limit sends a family's new sessions elsewhere: marked on the account they go to.
  for (const [family, p] of Object.entries(s.familyPreviews ?? {})) {
    const fv = p.verdicts.find((x) => x.account === a.label);
    if (fv?.verdict !== 'selected' || !a.usable) continue;
    nodes.push({
      kind: 'detail',
      id: id(`why:${family}`),
      label: vscode.l10n.t('A new {0} session goes here', family),
      description: candidateText(fv, reportFigures(a), now),
      icon: 'info',
    });
  }
  return nodes;
}

/** The OAuth grant's detail (`Signed in · 12 d ago`, a warning past `routing.grant-warn-days`), or undefined for an API key or a grant not read yet. */
function grantNode(a: AccountReport, id: string): AccountNode | undefined {
  if (!a.grant) return undefined;
  const warning = grantWarning(a);
  const age = a.grant.ageDays === null ? vscode.l10n.t('unknown') : a.grant.ageDays === 0 ? vscode.l10n.t('today') : vscode.l10n.t('{0} d ago', a.grant.ageDays);
  return {
    kind: 'detail',
    id,
    label: vscode.l10n.t('Signed in'),
    description: warning ? vscode.l10n.t('{0} · sign in again soon', age) : age,
    icon: warning ? 'warning' : 'key',
    tooltip: warning || grantText(a),
  };
}

/** A window's detail: `35% · resets in 2 h 5 min`. */
function resets(used: number | null, resetsAt: string | null, now: number): string {
  return vscode.l10n.t('{0} · resets in {1}', percent(used), timeUntil(resetsAt, now));
}

type SessionNode = { sessionId: string; account: string; idleLeftMs: number };

export class SessionsTreeProvider implements vscode.TreeDataProvider<SessionNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<SessionNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly subscription: vscode.Disposable;

  constructor(private readonly model: RouterModel) {
    this.subscription = model.onDidChange(() => this.emitter.fire(undefined));
  }

  getChildren(node?: SessionNode): SessionNode[] {
    if (node) return [];
    return this.model.status?.sessions ?? [];
  }

  getTreeItem(node: SessionNode): vscode.TreeItem {
    const item = new vscode.TreeItem(node.sessionId.slice(0, 8), vscode.TreeItemCollapsibleState.None);
    item.id = `session:${node.sessionId}`;
    // Short for the default sidebar width; the tooltip says what the time is.
    item.description = `${node.account} · ${formatDuration(Math.round(node.idleLeftMs / 1000))}`;
    item.tooltip = vscode.l10n.t(
      'Session key hash {0}\nbound to {1}\nthe binding ends after {2} more without a request',
      node.sessionId,
      node.account,
      formatDuration(Math.round(node.idleLeftMs / 1000)),
    );
    item.iconPath = new vscode.ThemeIcon('comment-discussion');
    return item;
  }

  dispose(): void {
    this.subscription.dispose();
    this.emitter.dispose();
  }
}
