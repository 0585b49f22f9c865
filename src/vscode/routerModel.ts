/**
 * What the views show: the latest `/status` report and recent decisions,
 * read from this window's engine when it leads the proxy, or over HTTP from
 * the leading window otherwise. Refreshed on change events (and once a
 * minute, so reset countdowns move), never by busy polling.
 */
import * as vscode from 'vscode';
import type { DecisionRecord } from '../routing/decision';
import { readDecisionRecord } from '../routing/decisionRead';
import { toStickyKeyHash } from '../routing/identify';
import type { StatusReport } from '../proxy/status/status';
import type { HistoryRange, UsageSeries } from '../proxy/state/usageHistory';
import { workingModel } from '../proxy/status/workingModel';
import { fetchFromRouter } from '../proxy/http/identity';
import type { RouterService } from './routerService';

export class RouterModel implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<void>();
  /** Fires after `status`/`decisions` were refreshed. */
  readonly onDidChange = this.emitter.event;
  status: StatusReport | undefined;
  decisions: DecisionRecord[] = [];
  /** Why the model could not be read (follower cannot reach the leader, …). */
  error: string | undefined;
  /** Each account's utilisation, requests and tokens over {@link historyRange}, as the serving engine keeps them (usageHistory.ts). */
  history: UsageSeries[] = [];
  /** The range {@link history} is read for (the status panel's choice). */
  historyRange: HistoryRange = 'hour';
  /** The model the status (its eligibility and "next request" preview) is read for; null for a model-less request. */
  previewModel: string | null = null;
  private seq = 0;
  private pending: NodeJS.Timeout | undefined;
  private readonly subscription: vscode.Disposable;
  private readonly ticker: NodeJS.Timeout;

  constructor(private readonly service: RouterService) {
    this.subscription = service.onDidChange(() => this.schedule());
    this.ticker = setInterval(() => this.schedule(), 60_000);
    this.schedule();
  }

  /** Coalesces bursts of changes into one refresh. */
  schedule(delayMs = 150): void {
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      void this.refresh();
    }, delayMs);
  }

  async refresh(): Promise<void> {
    // Refreshes may overlap (timer and events); only the newest one's result is kept.
    const seq = ++this.seq;
    const next = await this.read();
    if (seq !== this.seq) return;
    if (next.status) this.status = next.status;
    this.history = next.history ?? [];
    if (next.decisions) this.decisions = next.decisions;
    this.error = next.error;
    this.emitter.fire();
  }

  /**
   * The status is read for the model the user's Claude Code worked with last (workingModel.ts), from
   * the decisions of the previous refresh: its model-scoped windows count for "a new request would go here".
   */
  private async read(): Promise<{ status?: StatusReport; decisions?: DecisionRecord[]; history?: UsageSeries[]; error?: string }> {
    try {
      const role = this.service.role;
      const engine = this.service.engine;
      const model = workingModel(this.decisions);
      this.previewModel = model;
      if ((role.kind === 'leader' || role.kind === 'starting') && engine) {
        // The engine samples the history on its own; this sample makes the latest point the status's numbers.
        engine.sampleUsage();
        return {
          status: engine.status(model),
          decisions: this.service.recentDecisions(200),
          history: engine.history(this.historyRange),
          error: role.kind === 'starting' ? 'starting' : undefined,
        };
      }
      if (role.kind === 'follower') {
        // The key goes only to a holder of the port that proves it knows it (a leader that left may have been replaced).
        const statusPath = model ? `/status?model=${encodeURIComponent(model)}` : '/status';
        const [s, d, h] = await fetchFromRouter(role.url, this.service.clientKey, [statusPath, '/decisions?limit=200', `/history?range=${this.historyRange}`]);
        const [status, decisions] = [s.text, d.text];
        if (s.statusCode !== 200 || d.statusCode !== 200) throw new Error(`the leading window answered ${s.statusCode}`);
        return {
          status: hashedSessions(JSON.parse(status) as StatusReport),
          decisions: (JSON.parse(decisions) as unknown[]).map(readDecisionRecord).filter((r) => r !== null),
          // A leading window of an older version has no history endpoint (404): no charts then.
          history: h.statusCode === 200 ? (JSON.parse(h.text) as UsageSeries[]) : [],
        };
      }
      return { error: role.kind === 'blocked' ? role.reason : 'the proxy is stopped' };
    } catch (err) {
      return { error: `cannot read the proxy's state: ${(err as Error).message}` };
    }
  }

  /**
   * A page of the decision log on disk through the one query path of `/decisions` (decisionQuery.ts):
   * this window's engine when it leads, the leading window's `/decisions` otherwise.
   * @param query `/decisions` parameters (`limit`, `session`, `account`, `outcome`, `reason`, `since`, `until`, `request`, `before`)
   * @returns the records (oldest first) and the cursor of the page before them (null: none left)
   * @throws Error naming a bad parameter, or why the log cannot be read
   */
  async queryDecisions(query: string): Promise<{ records: DecisionRecord[]; next: string | null }> {
    const role = this.service.role;
    const engine = this.service.engine;
    if ((role.kind === 'leader' || role.kind === 'starting') && engine) {
      const page = await engine.queryDecisions(query);
      if ('error' in page) throw new Error(page.error);
      return page;
    }
    if (role.kind !== 'follower') throw new Error(role.kind === 'blocked' ? role.reason : 'the proxy is stopped');
    const [answer] = await fetchFromRouter(role.url, this.service.clientKey, [`/decisions?${query}`]);
    if (answer.statusCode !== 200) throw new Error(`the leading window answered ${answer.statusCode}: ${answer.text.slice(0, 200)}`);
    const link = answer.headers.link;
    const before = typeof link === 'string' ? /[?&]before=([^&>]+)/.exec(link)?.[1] : undefined;
    return {
      records: (JSON.parse(answer.text) as unknown[]).map(readDecisionRecord).filter((r) => r !== null),
      next: before ? decodeURIComponent(before) : null,
    };
  }

  dispose(): void {
    clearInterval(this.ticker);
    if (this.pending) clearTimeout(this.pending);
    this.subscription.dispose();
    this.emitter.dispose();
  }
}

/** A leading window of an older version reports raw session ids: the views show only hashes. */
function hashedSessions(status: StatusReport): StatusReport {
  return { ...status, sessions: status.sessions.map((b) => ({ ...b, sessionId: toStickyKeyHash(b.sessionId) })) };
}
