/**
 * "Claude Router: Compare Routing Policies on My Traffic": the what-if simulator (docs/whatif.md)
 * on the extension's own decision log (the simulated accounts' while they serve), in a child process (`dist/simulate.js`, never on the
 * extension host's thread) under a cancellable progress notification; the result in a webview — a
 * table and a chart of each policy's switches, cache writes, refused requests and unused allowance,
 * beside what the log shows happened — with "Use this policy", which writes the settings through
 * "Choose Routing Strategy" (so a config file that sets the strategy is respected).
 *
 * Arguments (for tests and keybindings): `executeCommand('claudeRouter.comparePolicies', files?, use?)`
 * — `files`, decision logs to read instead of the extension's; `use`, a policy name to apply at once.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { byRotationOrder } from '../proxy/state/decisionFiles';
import { refusedOf, toleranceText } from '../whatif/compare';
import type { PolicyOutput, SimulationOutput } from '../whatif/output';
import { parsePolicyName } from '../whatif/policies';
import type { RouterService } from './routerService';
import type { ChooseStrategyResult } from './strategyCommand';

/** What the command did: the simulation, the page it showed, and the policy it applied when asked. */
export interface ComparePoliciesResult {
  output: SimulationOutput;
  html: string;
  used?: ChooseStrategyResult;
}

/** The extension's decision logs, oldest first (the live one and its rotations). */
function ownLogs(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((f) => /^decisions.*\.jsonl$/.test(f))
    .sort(byRotationOrder)
    .map((f) => path.join(dir, f));
}

/** Applies the policy named `name` (`fill-first:headroom-first`, `round-robin`, …) as the user's setting. */
function usePolicy(name: string): Thenable<ChooseStrategyResult> {
  const { strategy, ranking } = parsePolicyName(name);
  return vscode.commands.executeCommand<ChooseStrategyResult>('claudeRouter.chooseStrategy', strategy, ranking);
}

/** Runs `dist/simulate.js` on `files`; undefined when cancelled. @throws Error with the child's message when it fails */
function runChild(script: string, files: readonly string[]): Thenable<SimulationOutput | undefined> {
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Claude Router: replaying your traffic under each policy', cancellable: true },
    (progress, token) =>
      new Promise<SimulationOutput | undefined>((resolve, reject) => {
        const child = fork(script, [...files], { silent: true, execArgv: [] });
        let stdout = '';
        let stderr = '';
        let done = 0;
        child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
        child.stderr!.setEncoding('utf8').on('data', (c: string) => {
          stderr += c;
          for (const m of c.matchAll(/^progress (\d+)\/(\d+)$/gm)) {
            const now = Number(m[1]);
            progress.report({ increment: ((now - done) * 100) / Number(m[2]), message: `${now} of ${m[2]} policies` });
            done = now;
          }
        });
        const cancel = token.onCancellationRequested(() => child.kill());
        child.once('error', reject);
        child.once('close', (code) => {
          cancel.dispose();
          if (token.isCancellationRequested) return resolve(undefined);
          if (code !== 0) return reject(new Error(lastLine(stderr) ?? `the simulation exited with code ${code}`));
          resolve(JSON.parse(stdout) as SimulationOutput);
        });
      }),
  );
}

const lastLine = (text: string) =>
  text
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith('progress '))
    .pop()
    ?.replace(/^claude-router: /, '');

/** The command. */
export async function comparePolicies(context: vscode.ExtensionContext, service: RouterService, filesArg?: unknown, useArg?: unknown): Promise<ComparePoliciesResult | undefined> {
  const files = Array.isArray(filesArg) && filesArg.every((f) => typeof f === 'string') ? filesArg : ownLogs(service.decisionDir);
  if (files.length === 0) {
    void vscode.window.showInformationMessage('Claude Router: no decision log yet — the comparison needs some traffic through the router first.');
    return undefined;
  }
  let output: SimulationOutput | undefined;
  try {
    output = await runChild(path.join(context.extensionPath, 'dist', 'simulate.js'), files);
  } catch (err) {
    void vscode.window.showErrorMessage(`Claude Router: the comparison failed: ${(err as Error).message}`);
    return undefined;
  }
  if (!output) return undefined;
  const html = ComparePanel.show(output, (name) => void usePolicy(name));
  if (!output.calibration.ok) {
    void vscode.window.showWarningMessage(
      'Claude Router: replaying your recorded policy does not reproduce your log closely; treat the comparison with caution (see its calibration line).',
    );
  }
  const used = typeof useArg === 'string' ? await usePolicy(useArg) : undefined;
  return { output, html, used };
}

/** The webview: one at a time, its page rebuilt for each comparison. */
class ComparePanel {
  private static current: vscode.WebviewPanel | undefined;
  private static onUse: (name: string) => void = () => undefined;
  /** The policies of the table shown: a button may name only one of them. */
  private static names = new Set<string>();

  /** Shows `output`; `onUse` receives the policy a "Use this policy" button names. Returns the page. */
  static show(output: SimulationOutput, onUse: (name: string) => void): string {
    ComparePanel.onUse = onUse;
    ComparePanel.names = new Set(output.policies.map((p) => p.name));
    let panel = ComparePanel.current;
    if (!panel) {
      panel = vscode.window.createWebviewPanel('claudeRouter.comparePolicies', 'Claude Router: Compare Routing Policies', vscode.ViewColumn.Active, {
        enableScripts: true,
        localResourceRoots: [],
      });
      ComparePanel.current = panel;
      panel.onDidDispose(() => (ComparePanel.current = undefined));
      // Only a policy of the table: the page names one, the extension checks it.
      panel.webview.onDidReceiveMessage((m: { type?: string; name?: unknown }) => {
        if (m?.type === 'use' && typeof m.name === 'string' && ComparePanel.names.has(m.name)) ComparePanel.onUse(m.name);
      });
    } else {
      panel.reveal();
    }
    panel.webview.html = page(output, panel.webview.cspSource);
    return panel.webview.html;
  }
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const num = (n: number) => Math.round(n).toLocaleString('en-US');
const plural = (n: number, word: string) => `${num(n)} ${word}${n === 1 ? '' : 's'}`;

/** The figures the chart shows, per policy line. */
const CHART: Array<{ title: string; value: (p: PolicyOutput) => number; text: (v: number) => string }> = [
  { title: 'Mid-session switches', value: (p) => p.report.midSessionSwitches, text: num },
  { title: 'Cache-creation tokens', value: (p) => p.report.cacheCreationTokens, text: num },
  { title: 'Refused requests', value: (p) => p.refused, text: num },
  { title: 'Unused at weekly resets (account-weeks)', value: (p) => p.report.unusedWeeklyAllowance, text: (v) => v.toFixed(2) },
];

/** One SVG bar chart per figure, a bar per policy (the log's own first). */
function charts(rows: readonly PolicyOutput[]): string {
  return CHART.map((c) => {
    const max = Math.max(...rows.map(c.value), 1e-9);
    const bars = rows
      .map((p, i) => {
        const v = c.value(p);
        const w = Math.max(1, Math.round((v / max) * 240));
        return `<text x="0" y="${i * 18 + 12}">${esc(p.name)}</text><rect x="190" y="${i * 18 + 2}" width="${w}" height="12" class="${p.recorded ? 'bar recorded' : 'bar'}"/><text x="${196 + w}" y="${i * 18 + 12}">${esc(c.text(v))}</text>`;
      })
      .join('');
    return `<figure><figcaption>${esc(c.title)}</figcaption><svg role="img" width="520" height="${rows.length * 18 + 4}">${bars}</svg></figure>`;
  }).join('');
}

/** The page: the table, the chart, the calibration and the limits. Labels and numbers only. */
function page(o: SimulationOutput, cspSource: string): string {
  const nonce = randomBytes(16).toString('base64');
  const actual: PolicyOutput = {
    name: 'actual (the log)',
    description: o.recorded.description,
    recorded: false,
    report: o.actual,
    refused: refusedOf(o.actual),
    unusedWeeklyAllowanceTokens: 0,
  };
  const lines = o.policies.some((p) => p.recorded) ? o.policies : [o.recorded, ...o.policies];
  const row = (p: PolicyOutput, button: boolean) => {
    const r = p.report;
    const cells = [
      r.switchesPer1000SessionRequests.toFixed(1),
      num(r.midSessionSwitches),
      num(r.pingPongPairs),
      num(r.cacheCreationTokens),
      `${(r.shareTimeAtMostOneUsable * 100).toFixed(1)}%`,
      r.hoursAtLeastTwoUsable.toFixed(1),
      `${(r.fallbackShare * 100).toFixed(1)}%`,
      num(p.refused),
      r.weeklyResets.length ? `${r.weeklyResetsWithUnused}/${r.weeklyResets.length}, ${r.unusedWeeklyAllowance.toFixed(2)} wk` : '–',
    ];
    const action = !button ? '' : p.recorded ? '<span class="muted">recorded</span>' : `<button data-use="${esc(p.name)}">Use this policy</button>`;
    return `<tr${p.recorded ? ' class="recorded"' : ''}><th scope="row" title="${esc(p.description)}">${p.recorded ? '* ' : ''}${esc(p.name)}</th>${cells.map((c) => `<td>${esc(c)}</td>`).join('')}<td>${action}</td></tr>`;
  };
  const cal = o.calibration;
  const calText = cal.figures.map((f) => `${f.metric} ${num(f.simulated)} vs ${num(f.actual)}`).join(', ');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-${nonce}' ${cspSource}; script-src 'nonce-${nonce}';">
<title>Claude Router: Compare Routing Policies</title>
<style nonce="${nonce}">
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 16px 24px; }
/* Eleven columns outgrow a narrow editor: the table scrolls on its own, the policy names stay in view. */
.table-scroll { overflow-x: auto; margin: 12px 0; }
table { border-collapse: collapse; }
th[scope=row], thead th:first-child { position: sticky; left: 0; background: var(--vscode-editor-background); }
th, td { padding: 3px 10px; border-bottom: 1px solid var(--vscode-panel-border); text-align: right; white-space: nowrap; }
th[scope=row], thead th:first-child { text-align: left; }
tr.recorded th, tr.recorded td { font-weight: bold; }
.muted { color: var(--vscode-descriptionForeground); }
.warning { color: var(--vscode-editorWarning-foreground); }
figure { display: inline-block; margin: 8px 24px 8px 0; }
figcaption { margin-bottom: 4px; }
svg text { fill: var(--vscode-foreground); font-size: 11px; }
.bar { fill: var(--vscode-charts-blue); } .bar.recorded { fill: var(--vscode-charts-orange); }
button { color: var(--vscode-button-foreground); background: var(--vscode-button-background); border: none; padding: 2px 8px; cursor: pointer; }
</style></head>
<body>
<h2>Routing policies on your traffic</h2>
<p>${plural(o.stats.requests, 'request')} of ${plural(o.sessions, 'session')} over ${o.span.days.toFixed(1)} days, replayed under each policy in ${(o.wallMs / 1000).toFixed(1)} s. Recorded policy: ${esc(o.recorded.description)}.</p>
<div class="table-scroll"><table><thead><tr><th>policy</th><th>switches/1k</th><th>switches</th><th>ping-pong</th><th>cache writes</th><th>≤1 usable</th><th>≥2 usable h</th><th>fallback</th><th>refused</th><th>unused at weekly resets</th><th></th></tr></thead>
<tbody>${row(actual, false)}${lines.map((p) => row(p, true)).join('')}</tbody></table></div>
<p class="${cal.ok ? 'muted' : 'warning'}">Calibration (the recorded policy replayed vs the log): ${esc(calText)} — ${cal.ok ? `within ${toleranceText('or')}` : `off by more than ${toleranceText('and')}: treat the comparison with caution`}.</p>
<div>${charts([actual, ...lines])}</div>
<h3>Limits</h3><ul>${o.limits.map((l) => `<li>${esc(l)}</li>`).join('')}</ul>
<script nonce="${nonce}">
const vscode = acquireVsCodeApi();
for (const b of document.querySelectorAll('button[data-use]')) b.addEventListener('click', () => vscode.postMessage({ type: 'use', name: b.dataset.use }));
</script>
</body></html>`;
}
