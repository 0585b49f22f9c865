/**
 * "Show Routing Status": a webview with the pool (bars, countdowns, why each account would or
 * would not be picked), usage over time, the session timeline, a decision browser, bound sessions,
 * the policy with each value's source, and the rollout metrics. The extension builds every word
 * (src/proxy/status/panelData.ts) and posts it on each model change and every 30 s, so countdowns
 * move; the page (src/webview/, bundled to dist/panel.js) patches itself in place. Strict CSP, no
 * remote resources, theme colours only. A serializer brings the panel back after a window reload.
 */
import * as vscode from 'vscode';
import { randomBytes } from 'node:crypto';
import { buildPanelData, type DecisionBrowser } from '../proxy/status/panelData';
import { HISTORY_RANGES, type HistoryRange } from '../proxy/state/usageHistory';
import type { RouterModel } from './routerModel';
import type { RouterService } from './routerService';

const VIEW_TYPE = 'claudeRouter.status';
/** The panel's title (also the serializer's, so a restored panel keeps it). */
const title = () => vscode.l10n.t('Claude Router: Routing Status');
/** Countdowns on the page move this often without new data (ms). */
const REFRESH_MS = 30_000;
/** Decisions per page of the browser. */
const PAGE = 50;
/** The filters the page may send, as `/decisions` parameters (decisionQuery.ts checks their values). */
const FILTERS = ['account', 'outcome', 'reason', 'session', 'request', 'since', 'until'] as const;

/** The commands the page's buttons may run (the empty pool's next steps, the decision log). */
const PANEL_ACTIONS = new Set(['signIn', 'importClaudeCodeLogin', 'addToken', 'trySimulated', 'openDecisionLog']);

function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'media'), vscode.Uri.joinPath(extensionUri, 'dist')] };
}

export class StatusPanel implements vscode.Disposable {
  static current: StatusPanel | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];
  private readonly ticker: NodeJS.Timeout;
  private range: HistoryRange;
  private disposed = false;
  /** The decision browser's filter as `/decisions` parameters, what it read, and its reads in flight. */
  private filterQuery = '';
  private browser: DecisionBrowser = { records: [], next: null, loading: true, error: null };
  private browseSeq = 0;
  private browsing = false;
  private refreshPending = false;

  /** Opens the panel, or reveals it when it is open. */
  static show(extensionUri: vscode.Uri, model: RouterModel, service: RouterService): StatusPanel {
    if (StatusPanel.current) {
      StatusPanel.current.panel.reveal();
      return StatusPanel.current;
    }
    const panel = vscode.window.createWebviewPanel(VIEW_TYPE, title(), vscode.ViewColumn.Active, { ...webviewOptions(extensionUri), retainContextWhenHidden: false });
    StatusPanel.current = new StatusPanel(panel, extensionUri, model, service, 'hour');
    return StatusPanel.current;
  }

  /** Restores a panel that was open when the window reloaded (with the page's saved state). */
  static register(extensionUri: vscode.Uri, model: RouterModel, service: RouterService): vscode.Disposable {
    return vscode.window.registerWebviewPanelSerializer(VIEW_TYPE, {
      deserializeWebviewPanel: async (panel: vscode.WebviewPanel, state: unknown) => {
        StatusPanel.current?.dispose();
        panel.webview.options = webviewOptions(extensionUri);
        const saved = (state as { range?: unknown } | undefined)?.range;
        const range = HISTORY_RANGES.includes(saved as HistoryRange) ? (saved as HistoryRange) : 'hour';
        StatusPanel.current = new StatusPanel(panel, extensionUri, model, service, range);
      },
    });
  }

  private constructor(
    private readonly panel: vscode.WebviewPanel,
    private readonly extensionUri: vscode.Uri,
    private readonly model: RouterModel,
    private readonly service: RouterService,
    range: HistoryRange,
  ) {
    this.range = range;
    model.historyRange = range;
    const media = vscode.Uri.joinPath(extensionUri, 'media');
    panel.iconPath = vscode.Uri.joinPath(media, 'router.svg');
    panel.title = title();
    panel.webview.html = this.html();
    this.subscriptions.push(
      model.onDidChange(() => {
        this.post();
        void this.browse('refresh');
      }),
      panel.onDidChangeViewState(() => {
        this.post();
        void this.browse('refresh');
      }),
      panel.webview.onDidReceiveMessage((m: { type?: string; command?: unknown; range?: unknown; filter?: unknown }) => {
        if (m?.type === 'decisions') {
          this.filterQuery = filterQuery(m.filter);
          void this.browse('first');
          return;
        }
        if (m?.type === 'more-decisions') return void this.browse('more');
        if (m?.type === 'ready' || m?.type === 'range') {
          if (HISTORY_RANGES.includes(m.range as HistoryRange) && m.range !== this.model.historyRange) {
            this.range = this.model.historyRange = m.range as HistoryRange;
            this.model.schedule(0); // the model reads the engine's history for the new range, then this posts it
          }
          this.post();
        }
        // Only the commands of PANEL_ACTIONS; the page names one, never an arbitrary command.
        else if (m?.type === 'run' && typeof m.command === 'string' && PANEL_ACTIONS.has(m.command)) void vscode.commands.executeCommand(`claudeRouter.${m.command}`);
      }),
      panel.onDidDispose(() => this.dispose()),
    );
    this.ticker = setInterval(() => this.post(), REFRESH_MS);
    model.schedule(0);
  }

  /** Posts what the page shows (labels, numbers and session hashes — never a token); nothing while hidden. */
  private post(): void {
    if (!this.panel.visible) return;
    const now = Date.now();
    const data = buildPanelData({
      now,
      status: this.model.status,
      decisions: this.model.decisions,
      error: this.model.error,
      role: this.service.role.kind,
      simulated: this.service.simulated,
      settingsError: this.service.settingsError,
      previewModel: this.model.previewModel,
      range: this.range,
      history: this.model.history.filter((h) => h.range === this.range),
      browser: this.browser,
    });
    void this.panel.webview.postMessage({ type: 'update', data });
  }

  /**
   * Reads the decision browser's page from the log on disk (RouterModel.queryDecisions, the one
   * query path of `/decisions`): `first` for a new filter, `more` for the next older page, `refresh`
   * for the decisions since the newest shown, added on top (the pages read stay). A newer read
   * outdates an older one.
   */
  private async browse(mode: 'first' | 'more' | 'refresh'): Promise<void> {
    if (this.disposed || (mode === 'refresh' && !this.panel.visible)) return;
    if (mode === 'more' && this.browser.next === null) return;
    if (mode === 'refresh' && this.browsing) {
      this.refreshPending = true;
      return;
    }
    const seq = ++this.browseSeq;
    const params = new URLSearchParams(this.filterQuery);
    const shown = this.browser.records;
    const newest = shown.length > 0 ? Date.parse(shown[shown.length - 1].ts) : undefined;
    if (mode === 'refresh' && newest !== undefined) params.set('since', String(Math.max(newest, Number(params.get('since') ?? 0))));
    params.set('limit', String(mode === 'refresh' && newest !== undefined ? 500 : PAGE));
    if (mode === 'more') params.set('before', this.browser.next!);
    if (mode === 'first') this.browser = { records: [], next: null, loading: true, error: null };
    else this.browser = { ...this.browser, loading: true };
    this.browsing = true;
    if (mode === 'first') this.post();
    try {
      const page = await this.model.queryDecisions(params.toString());
      if (seq !== this.browseSeq) return;
      if (mode === 'more') this.browser = { records: [...page.records, ...this.browser.records], next: page.next, loading: false, error: null };
      else if (mode === 'first' || newest === undefined || page.next !== null) this.browser = { records: page.records, next: page.next, loading: false, error: null };
      else {
        // The newest shown and any others of its millisecond come again: each decision once.
        const ids = new Set(shown.map((r) => r.requestId));
        this.browser = { records: [...shown, ...page.records.filter((r) => !ids.has(r.requestId))], next: this.browser.next, loading: false, error: null };
      }
    } catch (err) {
      if (seq !== this.browseSeq) return;
      this.browser = { ...this.browser, loading: false, error: (err as Error).message };
    } finally {
      if (seq === this.browseSeq) this.browsing = false;
    }
    this.post();
    if (this.refreshPending) {
      this.refreshPending = false;
      void this.browse('refresh');
    }
  }

  private html(): string {
    const w = this.panel.webview;
    const nonce = randomBytes(16).toString('base64');
    const css = w.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'panel.css'));
    const js = w.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'panel.js'));
    return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${w.cspSource}; script-src 'nonce-${nonce}'; img-src ${w.cspSource};">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${css.toString()}">
<title>${title()}</title></head>
<body><main id="root"><p class="muted">Loading…</p></main>
<script nonce="${nonce}" src="${js.toString()}"></script></body></html>`;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (StatusPanel.current === this) StatusPanel.current = undefined;
    clearInterval(this.ticker);
    for (const s of this.subscriptions) s.dispose();
    this.panel.dispose();
  }
}

/** The page's filter (values as typed: empty means any) as `/decisions` parameters; anything else it sends is dropped. */
function filterQuery(filter: unknown): string {
  const params = new URLSearchParams();
  const f = (filter && typeof filter === 'object' ? filter : {}) as Record<string, unknown>;
  for (const key of FILTERS) {
    const v = f[key];
    if (typeof v === 'string' && v.trim() !== '') params.set(key, v.trim());
  }
  return params.toString();
}
