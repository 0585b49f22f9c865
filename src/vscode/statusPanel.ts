/**
 * "Show Routing Status": a webview with the active policy and each value's
 * source, every account's 5h/7d bars and reset countdowns, bound sessions, the
 * last decisions with every candidate's verdict, and the seed's metrics over
 * the recent decision log. Live (redrawn on model changes), theme-aware
 * (VS Code CSS variables), strict CSP, no remote resources.
 */
import * as vscode from 'vscode';
import { randomBytes } from 'node:crypto';
import { computeReport } from '../routing/report';
import { accountState, candidateText, eligibilityText, explainReason, poolSummary, whyNow } from '../proxy/status/statusView';
import { metricsFromRecord } from '../routing/decision';
import type { RouterModel } from './routerModel';
import type { RouterService } from './routerService';

/** The commands the panel's buttons may run (the empty pool's next steps). */
const PANEL_ACTIONS = new Set(['signIn', 'importClaudeCodeLogin', 'addToken', 'trySimulated']);

export class StatusPanel implements vscode.Disposable {
  static current: StatusPanel | undefined;
  private readonly panel: vscode.WebviewPanel;
  private readonly subscriptions: vscode.Disposable[] = [];

  static show(extensionUri: vscode.Uri, model: RouterModel, service: RouterService): StatusPanel {
    if (StatusPanel.current) {
      StatusPanel.current.panel.reveal();
      return StatusPanel.current;
    }
    StatusPanel.current = new StatusPanel(extensionUri, model, service);
    return StatusPanel.current;
  }

  private constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly model: RouterModel,
    private readonly service: RouterService,
  ) {
    const media = vscode.Uri.joinPath(extensionUri, 'media');
    this.panel = vscode.window.createWebviewPanel('claudeRouter.status', 'Claude Router: Routing Status', vscode.ViewColumn.Active, {
      enableScripts: true,
      localResourceRoots: [media],
      retainContextWhenHidden: false,
    });
    this.panel.iconPath = vscode.Uri.joinPath(media, 'router.svg');
    this.panel.webview.html = this.html();
    this.subscriptions.push(
      model.onDidChange(() => this.post()),
      this.panel.webview.onDidReceiveMessage((m: { type?: string; command?: unknown }) => {
        if (m?.type === 'ready') this.post();
        // Only the empty pool's next steps; the page names one, never an arbitrary command.
        else if (m?.type === 'run' && typeof m.command === 'string' && PANEL_ACTIONS.has(m.command)) void vscode.commands.executeCommand(`claudeRouter.${m.command}`);
      }),
      this.panel.onDidDispose(() => this.dispose()),
    );
    model.schedule(0);
  }

  /** The data the page renders (labels and numbers only — never a token). */
  private post(): void {
    const s = this.model.status;
    const report = computeReport(this.model.decisions);
    const now = Date.now();
    const shown = this.model.decisions.slice(-20).reverse();
    void this.panel.webview.postMessage({
      type: 'update',
      now,
      error: this.model.error ?? null,
      role: this.service.role.kind,
      simulated: this.service.simulated,
      settingsError: this.service.settingsError,
      status: s ?? null,
      summary: s ? poolSummary(s) : null,
      states: s ? Object.fromEntries(s.accounts.map((a) => [a.label, accountState(a, s)])) : {},
      reasons: Object.fromEntries(
        [
          ...new Set(
            [...(s?.preview.verdicts ?? []), ...this.model.decisions.flatMap((d) => d.candidates)].map((v) => v.reason).concat(this.model.decisions.map((d) => d.selectionReason)),
          ),
        ].map((r) => [r, explainReason(r)]),
      ),
      why: s ? Object.fromEntries(s.accounts.map((a) => [a.label, whyNow(a, s, now)])) : {},
      /** Per account, its eligibility for a new request in the filter verdict's words (its status is in the report). */
      eligibility: s ? Object.fromEntries(s.accounts.map((a) => [a.label, eligibilityText(a, now)])) : {},
      decisions: shown,
      /** Per shown decision, each candidate's verdict in words (the loser's own reason, not the winner's). */
      verdictTexts: shown.map((r) => r.candidates.map((c) => candidateText(c, metricsFromRecord(c.metrics), now))),
      report,
    });
  }

  private html(): string {
    const w = this.panel.webview;
    const nonce = randomBytes(16).toString('base64');
    const css = w.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'panel.css'));
    const js = w.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'panel.js'));
    return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${w.cspSource}; script-src 'nonce-${nonce}'; img-src ${w.cspSource};">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${css.toString()}">
<title>Claude Router: Routing Status</title></head>
<body><main id="root"><p class="muted">Loading…</p></main>
<script nonce="${nonce}" src="${js.toString()}"></script></body></html>`;
  }

  dispose(): void {
    StatusPanel.current = undefined;
    for (const s of this.subscriptions) s.dispose();
    this.panel.dispose();
  }
}
