/**
 * The product as a user gets it: the packaged VSIX installed into real VS Code
 * (code-server), driven through headless Chromium, one step after another: a fresh install's
 * status bar, the walkthrough, simulated accounts and their sample traffic, the real Claude Code
 * CLI in an integrated terminal (so with the extension's terminal environment), the routing
 * status panel — bars, charts, session timeline and decision browser compared with the numbers
 * behind them, patched in place, restored after hiding and after a reload — and the needs-sign-in
 * alert, and "Compare Routing Policies on My Traffic" with its what-if table. Screenshots go to
 * test-artifacts/.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { claudeCodeBinary } from '../support/claudeCode';
import {
  installVsix,
  launchChromium,
  openWorkbench,
  REPO_ROOT,
  retryWhileQuickInputCloses,
  runCommand,
  screenshot,
  startCodeServer,
  statusBarItemById,
  waitForNotification,
  waitForWebviewText,
  writeQuietSettings,
  type CodeServer,
} from './codeServer';
import { freePort } from '../support/net';
import { startFakeUpstream, type FakeUpstream } from '../../src/sim';

const STATUS_ITEM_ID = 'claude-account-router.claude-account-router.claudeRouter.pool';

async function waitForFile(file: string, re: RegExp, ms: number): Promise<string> {
  const end = Date.now() + ms;
  for (;;) {
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    if (re.test(text)) return text;
    if (Date.now() > end) throw new Error(`timed out waiting for ${file} to match ${re} (has: ${JSON.stringify(text.slice(0, 300))})`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('the VSIX in real VS Code, driven like a user', function () {
  this.timeout(240_000);
  let temp: string;
  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let userDataDir: string;
  /** Where the terminal writes the proxy's URL and the local client key (first and second line). */
  let proxyFile: string;
  /** The upstream of the extension's real accounts: it knows none of the tokens the test adds. */
  let upstream: FakeUpstream;
  /** Console messages of the workbench and its webviews that report a CSP violation. */
  const cspErrors: string[] = [];
  /** Each dialog the workbench showed, with the time it appeared. */
  const dialogsSeen: string[] = [];

  before(async () => {
    temp = fs.mkdtempSync(path.join(os.tmpdir(), 'router-ui-'));
    const vsix = path.join(temp, 'claude-account-router.vsix');
    execFileSync(
      process.execPath,
      [path.join(REPO_ROOT, 'node_modules/@vscode/vsce/vsce'), 'package', '--no-dependencies', '--no-rewrite-relative-links', '--allow-missing-repository', '--out', vsix],
      { cwd: REPO_ROOT, stdio: 'pipe' },
    );
    const extensionsDir = path.join(temp, 'extensions');
    userDataDir = path.join(temp, 'user-data');
    proxyFile = path.join(temp, 'proxy.txt');
    const workspace = path.join(temp, 'workspace');
    fs.mkdirSync(workspace);
    // Editors open in the editor group (not as a modal over it), so one can hide the panel.
    upstream = await startFakeUpstream({ accounts: [] });
    writeQuietSettings(userDataDir, {
      'claudeRouter.port': await freePort(),
      'claudeRouter.upstreamBaseUrl': upstream.url,
      'claudeRouter.tokenUrl': upstream.tokenUrl,
      'terminal.integrated.defaultProfile.linux': 'bash',
      'workbench.editor.useModal': 'off',
    });
    await installVsix(vsix, extensionsDir, userDataDir);
    // After "Reload Window" the old extension host must end, as on the desktop, or it keeps the
    // proxy's port (code-server keeps a left page's host for 3 h by default, waiting for it to reconnect).
    server = await startCodeServer({ userDataDir, extensionsDir, folder: workspace, reconnectionGraceTimeS: 5 });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
    });
    await openWorkbench(page, server.url, workspace);
    // Every modal dialog the workbench shows, whoever closes it: one makes the workbench inert while it is up.
    await page.exposeFunction('uiTestDialogSeen', (text: string) => dialogsSeen.push(`${new Date().toISOString().slice(11, 23)} ${text}`));
    await page.evaluate(`(() => {
      const seen = new WeakSet();
      new MutationObserver(() => {
        for (const d of document.querySelectorAll('.monaco-dialog-box, [role="dialog"]'))
          if (!seen.has(d)) {
            seen.add(d);
            window.uiTestDialogSeen(d.innerText.replace(/\\s+/g, ' ').slice(0, 300));
          }
      }).observe(document.body, { childList: true, subtree: true });
    })()`);
  });

  afterEach(async function () {
    if (this.currentTest?.state !== 'failed') return;
    await screenshot(page, `vscode-failed-${this.currentTest.title.slice(0, 60)}`).catch(() => undefined);
    // A CI runner keeps no screenshots: what the screen and the extension said goes to the test's output.
    console.log(
      `--- the screen when "${this.currentTest.title}" failed ---\n${await describeScreen(page)}\n--- dialogs seen ---\n${dialogsSeen.join('\n')}\n--- the extension's log (tail) ---\n${extensionLogTail(userDataDir)}`,
    );
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    await upstream?.close();
    if (temp) fs.rmSync(temp, { recursive: true, force: true });
  });

  it('a fresh install shows a neutral "set up" entry in the status bar, with an accessibility label', async () => {
    const item = statusBarItemById(page, STATUS_ITEM_ID);
    await item.waitFor({ state: 'visible', timeout: 45_000 });
    // A fresh install is neutral: a "set up" entry, no warning colour, a label for screen readers.
    await page.locator('.statusbar', { hasText: /Claude Router: set up/ }).waitFor({ state: 'visible', timeout: 15_000 });
    await screenshot(page, 'vscode-status-bar-fresh-install');
    assert.doesNotMatch((await item.getAttribute('class')) ?? '', /warning-kind|error-kind/);
    assert.ok((await page.locator('.statusbar [aria-label*="no accounts yet"]').count()) > 0, 'the item has an accessibility label');
  });

  it('"Get Started" opens the walkthrough: add an account or try simulated ones, run claude, watch it route', async () => {
    await runCommand(page, 'Claude Router: Get Started');
    const walkthrough = page.locator('.gettingStartedContainer', { hasText: 'Get Started with Claude Account Router' });
    await walkthrough.waitFor({ state: 'visible', timeout: 20_000 });
    for (const step of ['Add a Claude account', 'Or try simulated accounts', 'Run claude in a new terminal', 'Watch it route']) {
      await walkthrough.locator('.getting-started-step', { hasText: step }).first().waitFor({ state: 'attached', timeout: 5_000 });
    }
    await screenshot(page, 'vscode-walkthrough');
    await runCommand(page, 'View: Close All Editors');
  });

  it('"Try with Simulated Accounts" from the empty pool: three accounts, sample traffic spreads over them', async () => {
    const item = statusBarItemById(page, STATUS_ITEM_ID);
    // The empty pool's panel offers the next steps as buttons; one starts the simulated accounts.
    await runCommand(page, 'Claude Router: Show Routing Status');
    const empty = await waitForWebviewText(page, /No accounts yet/, 30_000);
    assert.doesNotMatch(await empty.innerText(), /0 of 0|usable account 0/, 'no pool figures for an empty pool');
    for (const label of ['Sign In with Claude', "Import Claude Code's Login", 'Add Account from Token']) {
      await empty.locator('button', { hasText: label }).waitFor({ state: 'visible', timeout: 5_000 });
    }
    await screenshot(page, 'vscode-empty-pool-panel');
    await empty.locator('button', { hasText: 'Try with Simulated Accounts' }).click();
    await waitForNotification(page, /simulated accounts/i);
    await runCommand(page, 'Claude Router: Focus on Accounts View');
    for (const label of ['work', 'personal', 'team']) {
      const row = page
        .locator('.monaco-list-row', { hasText: label })
        .filter({ hasText: /5h \d+%/ })
        .first();
      await row.waitFor({ state: 'visible', timeout: 30_000 });
    }
    // The halfway throttle may have paused one account for a moment.
    await page.locator('.statusbar', { hasText: /[23]\/3 usable/ }).waitFor({ state: 'visible', timeout: 15_000 });
    assert.match((await item.innerText()).trim(), /[23]\/3 usable · \d+% left \(simulated\)/);
    // At the default sidebar width the plain descriptions ("5h 35% · 7d 62%") are not cut.
    const plain = page.locator('.monaco-list-row').filter({ has: page.locator('.label-description', { hasText: /^5h \d+% · 7d \d+%$/ }) });
    assert.ok((await plain.count()) >= 2, 'at least two accounts are plain Active and eligible');
    for (const row of await plain.all()) {
      const cut = await row.locator('.monaco-icon-label-container').evaluate((e: any) => e.scrollWidth > e.clientWidth);
      assert.equal(cut, false, `"${await row.innerText()}" is cut at the default sidebar width`);
    }
    await screenshot(page, 'vscode-accounts-view');
    // The sample traffic (about 20 s) spreads the conversations: two accounts or more serve them.
    await runCommand(page, 'Claude Router: Show Routing Status');
    const panel = await waitForWebviewText(page, /Sessions over time/, 30_000);
    await panel.locator('#decisions-count', { hasText: /^3\d matching decisions from the log/ }).waitFor({ state: 'visible', timeout: 45_000 });
    const shares = await panel.locator('.account-head .muted').allInnerTexts();
    const serving = shares.filter((t) => /[1-9]\d*% of the last/.test(t));
    assert.ok(serving.length >= 2, `requests spread over accounts: ${shares.join(' | ')}`);
  });

  it('the real Claude Code CLI in an integrated terminal gets an answer through the extension', async () => {
    const claude = claudeCodeBinary();
    const out = path.join(temp, 'claude-out.txt');
    const home = path.join(temp, 'claude-home');
    fs.mkdirSync(home);
    await runCommand(page, 'Terminal: Create New Terminal');
    await page.locator('.terminal-wrapper .xterm').first().waitFor({ state: 'visible', timeout: 30_000 });
    await page.locator('.terminal-wrapper .xterm').first().click();
    // The terminal's own environment (from the extension) points claude at the proxy.
    // The terminal's environment also gives the test the proxy's address and local key, to send requests of its own later.
    await page.keyboard.type(
      `printf '%s\\n%s\\n' "$ANTHROPIC_BASE_URL" "$CLAUDE_CODE_OAUTH_TOKEN" > '${proxyFile}'; HOME='${home}' '${claude}' -p "say hi" > '${out}' 2>&1 < /dev/null; echo "exit=$?" >> '${out}'`,
    );
    await page.keyboard.press('Enter');
    const text = await waitForFile(out, /exit=\d+/, 90_000);
    assert.match(text, /Hello from (work|personal|team)\./, text);
    assert.match(text, /exit=0/);
    // Show the answer in the terminal for the screenshot (the assertions above read the file).
    await page.keyboard.type(`cat '${out}'`);
    await page.keyboard.press('Enter');
    await page.waitForTimeout(1_500);
    await screenshot(page, 'vscode-terminal-claude');
  });

  it('"Show Routing Status" opens the panel with the accounts and the decision that served Claude Code', async () => {
    await runCommand(page, 'Claude Router: Show Routing Status');
    const body = await waitForWebviewText(page, /Decisions/, 30_000);
    await waitForWebviewText(page, /accounts usable/);
    const text = await body.innerText();
    for (const label of ['work', 'personal', 'team']) assert.ok(text.includes(label), `panel lists ${label}`);
    assert.match(text, /Policy/);
    assert.match(text, /account-ranking\s+headroom-first\s+simulated accounts' demo default/);
    assert.match(text, /(work|personal|team) · .* · success/);
    assert.doesNotMatch(text, /0 of 0 accounts/);
    assert.match(text, /Routing metrics/);
    // Each usage bar is drawn as wide as its number says (a CSP-blocked style drew them all full).
    const bars = body.locator('.bar[role="meter"]');
    assert.ok((await bars.count()) >= 6, 'a 5h and a 7d bar per account');
    for (const bar of await bars.all()) {
      const value = Number(await bar.getAttribute('aria-valuenow'));
      const outer = (await bar.boundingBox())!;
      const fill = (await bar.locator('.fill').boundingBox()) ?? { width: 0 };
      assert.ok(Math.abs(fill.width - (outer.width * value) / 100) <= 3, `bar of ${value} % drawn ${fill.width.toFixed(1)} of ${outer.width.toFixed(1)} px`);
    }
    await screenshot(page, 'vscode-routing-status-panel');
  });

  it('charts draw the sampled utilisation: each point where its number says, the latest equal to the bar', async () => {
    const frame = panelFrame(page);
    const charts = frame.locator('figure.chart-box');
    assert.equal(await charts.count(), 3);
    let multi = 0;
    for (const chart of await charts.all()) {
      const account = (await chart.getAttribute('data-account'))!;
      await chart.locator('details.chart-data summary').click();
      const rows = chart.locator('table.samples tbody tr');
      await rows.first().waitFor({ state: 'visible', timeout: 5_000 });
      const values = (await rows.evaluateAll((trs: any[]) => trs.map((tr) => tr.dataset.session))).filter((v: string) => v !== '').map(Number);
      const points = ((await chart.locator('polyline[data-window="5h"]').getAttribute('points')) ?? '').split(' ').map((p) => Number(p.split(',')[1]));
      assert.equal(points.length, values.length, `${account}: one point per sample`);
      values.forEach((v, i) => assert.ok(Math.abs(points[i] - 100 * (1 - Math.min(1, v))) <= 0.05, `${account}: point ${i} at y ${points[i]} for ${v}`));
      const bar = frame.locator(`[id="account-${account}"] .bar[data-window="5 h"]`);
      const shown = Number(await bar.getAttribute('aria-valuenow'));
      // A window can run past 100 %; the bar stops at its end.
      assert.ok(Math.abs(shown - Math.min(1, values[values.length - 1]) * 100) <= 1, `${account}: the latest sample ${values[values.length - 1]} is the bar's ${shown} %`);
      if (values.length >= 2) multi++;
    }
    assert.ok(multi >= 1, 'after the sample traffic a chart has a line, not a single dot');
    // The requests and tokens each account served: a bar per interval, as tall as its count on the scale all accounts share.
    const served = async () => {
      let requests = 0;
      let tokens = 0;
      for (const chart of await charts.all()) {
        const rows = await chart
          .locator('table.samples tbody tr')
          .evaluateAll((trs: any[]) => trs.map((tr) => ({ t: Number(tr.dataset.t), requests: Number(tr.dataset.requests), tokens: Number(tr.dataset.tokens) })));
        for (const kind of ['requests', 'tokens'] as const) {
          const box = chart.locator(`svg[data-kind="${kind}"]`);
          const max = Number(await box.getAttribute('data-max'));
          const bars = await box
            .locator('rect')
            .evaluateAll((rs: any[], k: string) => rs.map((r) => ({ t: Number(r.dataset.t), value: Number(r.dataset[k]), height: Number(r.getAttribute('height')) })), kind);
          const expected = rows.filter((r) => r[kind] > 0);
          assert.deepEqual(
            bars.map((b) => [b.t, b.value]),
            expected.map((r) => [r.t, r[kind]]),
            `${kind}: a bar for each interval with any`,
          );
          for (const b of bars) assert.ok(Math.abs(b.height - (b.value / max) * 40) <= 0.05, `${kind} bar of ${b.value} (max ${max}) is ${b.height} high`);
        }
        requests += rows.reduce((n, r) => n + r.requests, 0);
        tokens += rows.reduce((n, r) => n + r.tokens, 0);
      }
      return { requests, tokens };
    };
    const hour = await served();
    assert.ok(hour.requests >= 20 && hour.tokens > 0, `the sample traffic's requests and tokens are counted: ${JSON.stringify(hour)}`);
    await frame.locator('#charts').scrollIntoViewIfNeeded();
    await screenshot(page, 'vscode-panel-charts');
    // The last 7 days (the router's history, in 30-minute points) holds the same requests.
    await frame.locator('#charts button', { hasText: 'Last 7 days' }).click();
    await frame.locator('#charts figcaption', { hasText: 'over the last 7 days' }).first().waitFor({ state: 'visible', timeout: 10_000 });
    for (const chart of await charts.all()) {
      const summary = chart.locator('details.chart-data summary');
      if ((await chart.locator('details.chart-data').getAttribute('open')) === null) await summary.click();
      await chart.locator('table.samples tbody tr').first().waitFor({ state: 'visible', timeout: 5_000 });
    }
    assert.deepEqual(await served(), hour, 'the week counts the same requests and tokens');
    await frame.locator('#charts').scrollIntoViewIfNeeded();
    await screenshot(page, 'vscode-panel-charts-week');
    await frame.locator('#charts button', { hasText: 'Last hour' }).click();
    await frame.locator('#charts figcaption', { hasText: 'over the last hour' }).first().waitFor({ state: 'visible', timeout: 10_000 });
  });

  it("the session timeline shows each conversation in its accounts' colours, and a switch with its cause", async () => {
    const frame = panelFrame(page);
    const lanes = frame.locator('li.lane-row');
    assert.ok((await lanes.count()) >= 8, 'a lane per sample conversation');
    const palette = ['work', 'personal', 'team'];
    for (const mark of (await frame.locator('svg.lane rect.mark').all()).slice(0, 40)) {
      // A request no account served is drawn in the neutral colour.
      const account = (await mark.getAttribute('data-account'))!;
      const colour = account === '' ? 'acct-none' : `acct-${palette.indexOf(account)}`;
      assert.match((await mark.getAttribute('class'))!, new RegExp(`${colour}\\b`), `a mark of "${account}" in its colour`);
    }
    // The halfway throttle moved a conversation: its lane has a switch, and the detail says why.
    const switched = frame.locator('svg.lane line.switch[data-cause="transient"]');
    await switched.first().waitFor({ state: 'attached', timeout: 10_000 });
    const lane = frame.locator('li.lane-row', { has: switched.first() }).first();
    await lane.locator('button.lane-name').click();
    await frame
      .locator('#lane-detail tr.switched', { hasText: /switched: transient error \(throttle\)/ })
      .first()
      .waitFor({ state: 'visible', timeout: 5_000 });
    const short = (await lane.locator('button.lane-name').innerText()).trim();
    assert.match(short, /^[0-9a-f]{8}$/, 'a session is named by its key hash, shortened');
    await frame.locator('#timeline').scrollIntoViewIfNeeded();
    await screenshot(page, 'vscode-panel-timeline');
  });

  it("the decision browser reads the log on disk: filters by account, session, request id, time and outcome, shows more, and expands to every candidate's verdict", async () => {
    const frame = panelFrame(page);
    const decisions = frame.locator('details.decision');
    const total = await decisions.count();
    await frame.locator('#filter-account').selectOption('personal');
    await until(async () => ((n) => n > 0 && n < total)(await decisions.count()), 10_000, 'the decisions personal served or was tried for');
    const served = await frame.locator('details.decision summary strong').allInnerTexts();
    assert.ok(served.includes('personal'), served.join(', '));
    // An account is found where it served, or where it was tried and another served.
    for (const other of await frame.locator('details.decision', { hasNot: frame.locator('summary strong', { hasText: /^personal$/ }) }).all()) {
      await other.locator('summary').click();
      assert.match(await other.locator('p', { hasText: 'Attempts:' }).innerText(), /personal →/);
    }
    await frame.locator('#filter-account').selectOption('');
    await until(async () => (await decisions.count()) === total, 10_000, 'every decision again');
    // "Show its decisions" from the timeline filters by the selected session's hash.
    await frame.locator('#lane-detail button', { hasText: 'Show its decisions' }).click();
    const prefix = await frame.locator('#filter-session').inputValue();
    assert.match(prefix, /^[0-9a-f]{8}$/);
    const requests = await frame.locator('#lane-detail tbody tr').count();
    await until(async () => (await decisions.count()) === requests, 10_000, "the session's requests, one decision each");
    for (const summary of await frame.locator('details.decision summary').allInnerTexts()) assert.ok(summary.includes(prefix), summary);
    const first = decisions.first();
    await first.locator('summary').click();
    const verdicts = first.locator('table.candidates tbody tr');
    assert.equal(await verdicts.count(), 3, 'every candidate');
    assert.match(await verdicts.first().innerText(), /selected — /);
    await frame.locator('#decisions').scrollIntoViewIfNeeded();
    await screenshot(page, 'vscode-panel-decisions');
    await frame.locator('button', { hasText: 'Clear filters' }).click();
    await until(async () => (await decisions.count()) === total, 10_000, 'every decision again');
    // A request looked up by its id (as an answer's x-claude-router-request-id names it).
    const id = (await decisions.nth(2).getAttribute('id'))!.slice('decision-'.length);
    await frame.locator('#filter-request').fill(id);
    await frame.locator('#decisions-count', { hasText: /^1 matching decision from the log/ }).waitFor({ state: 'visible', timeout: 10_000 });
    assert.equal(await decisions.getAttribute('id'), `decision-${id}`);
    await frame.locator('button', { hasText: 'Clear filters' }).click();
    // A time span, in the viewer's local time: from an hour ahead nothing; from two hours ago to an hour ahead, everything.
    const local = (ms: number) => new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await frame.locator('#filter-since').fill(local(Date.now() + 3_600_000));
    await frame.locator('#decisions-count', { hasText: 'No decision in the log matches.' }).waitFor({ state: 'visible', timeout: 10_000 });
    assert.equal(await decisions.count(), 0);
    await frame.locator('#filter-since').fill(local(Date.now() - 7_200_000));
    await frame.locator('#filter-until').fill(local(Date.now() + 3_600_000));
    await until(async () => (await decisions.count()) === total, 10_000, 'every decision within the span');
    await frame.locator('#decisions').scrollIntoViewIfNeeded();
    await screenshot(page, 'vscode-panel-decisions-time');
    await frame.locator('button', { hasText: 'Clear filters' }).click();
    // More than a page in the log: the first page has 50, "Show more" reads the next from the log.
    const extra = Math.max(0, 60 - total);
    for (let i = 0; i < extra; i += 10) await Promise.all(Array.from({ length: Math.min(10, extra - i) }, (_, j) => sendRequest(proxyFile, `ui-more-${i + j}`)));
    await frame.locator('#filter-outcome').selectOption('success');
    await frame.locator('#decisions-count', { hasText: /^50 matching decisions from the log, newest first; older ones may match/ }).waitFor({ state: 'visible', timeout: 15_000 });
    assert.equal(await decisions.count(), 50);
    await frame.locator('#decisions-more').click();
    await until(async () => (await decisions.count()) > 50, 10_000, 'the next page');
    const ids = await decisions.evaluateAll((ds: any[]) => ds.map((d) => d.id));
    assert.equal(new Set(ids).size, ids.length, 'each decision once');
    assert.ok(ids.length <= 100, `at most two pages: ${ids.length}`);
    await frame.locator('#decisions-count', { hasText: new RegExp(`^${ids.length} matching decisions from the log`) }).waitFor({ state: 'visible', timeout: 5_000 });
    await frame.locator('button', { hasText: 'Clear filters' }).click();
    // The whole log, on disk, in an editor.
    await frame.locator('button', { hasText: 'Open Decision Log' }).click();
    await page.locator('.tab', { hasText: 'decisions.jsonl' }).waitFor({ state: 'visible', timeout: 10_000 });
    await runCommand(page, 'Claude Router: Show Routing Status');
    await waitForWebviewText(page, /Decisions/, 30_000);
  });

  it('patches the panel in place: a routing setting shows within 2 s, an expanded decision stays expanded, focus stays', async () => {
    const body = await waitForWebviewText(page, /Decisions/, 30_000);
    const frame = panelFrame(page);
    const first = frame.locator('details.decision:not([open])').first();
    const id = (await first.getAttribute('id'))!;
    await first.locator('summary').click();
    await frame.locator(`[id="${id}"] table.candidates`).waitFor({ state: 'visible', timeout: 5_000 });
    // The routing setting, chosen as a user would; the panel shows it within 2 s of the choice.
    await retryWhileQuickInputCloses(async () => {
      await runCommand(page, 'Claude Router: Choose Routing Strategy', 15_000, true);
      await page.locator('.quick-input-widget input').fill('usage-weighted', { timeout: 5_000 });
      await page.locator('.quick-input-widget .monaco-list-row.focused', { hasText: 'usage-weighted' }).waitFor({ state: 'visible', timeout: 10_000 });
    });
    const started = Date.now();
    await page.keyboard.press('Enter');
    await body.locator('#policy tr', { hasText: /strategy\s*usage-weighted/ }).waitFor({ state: 'visible', timeout: 2_000 });
    const took = Date.now() - started;
    assert.ok(took <= 2_000, `the setting showed after ${took} ms`);
    assert.equal(await frame.locator(`[id="${id}"]`).getAttribute('open'), '', 'the expanded decision is still expanded');
    // Focus inside the page survives an update too: a request of the test's own adds a decision, and the page is patched.
    const filter = frame.locator('#filter-session');
    await filter.focus();
    const before = await frame.locator('details.decision').count();
    await sendRequest(proxyFile, 'ui-test-session');
    await frame.locator('details.decision').nth(before).waitFor({ state: 'attached', timeout: 10_000 });
    assert.equal(await frame.locator(`[id="${id}"]`).getAttribute('open'), '', 'still expanded after the new decision arrived');
    assert.equal(await frame.locator('body').evaluate((b: any) => b.ownerDocument.activeElement?.id), 'filter-session', 'focus stayed in the filter');
    await screenshot(page, 'vscode-panel-after-live-update');
  });

  it('an expanded decision stays expanded when the panel is hidden and shown again (its page is rebuilt from the saved state)', async () => {
    const id = (await panelFrame(page).locator('details.decision[open]').first().getAttribute('id'))!;
    // A mark on the page's window: gone after the panel is shown again, so the page was really rebuilt.
    await panelFrame(page)
      .locator('body')
      .evaluate((b: any) => (b.ownerDocument.defaultView.uiTestMark = true));
    await runCommand(page, 'Preferences: Open User Settings (JSON)');
    await page.locator('iframe.webview').filter({ visible: true }).waitFor({ state: 'detached', timeout: 10_000 });
    await runCommand(page, 'Claude Router: Show Routing Status');
    await waitForWebviewText(page, /Decisions/, 30_000);
    await panelFrame(page).locator(`[id="${id}"][open] table.candidates`).waitFor({ state: 'visible', timeout: 10_000 });
    assert.equal(
      await panelFrame(page)
        .locator('body')
        .evaluate((b: any) => b.ownerDocument.defaultView.uiTestMark === true),
      false,
      'a new page',
    );
  });

  it('the panel comes back after a window reload', async () => {
    await runCommand(page, 'Developer: Reload Window');
    await page.locator('.monaco-workbench .statusbar').waitFor({ state: 'visible', timeout: 45_000 });
    await page.locator('.tab', { hasText: 'Claude Router: Routing Status' }).first().click({ timeout: 45_000 });
    // The simulated accounts stopped with the window: the restored panel shows the pool as it is now.
    await waitForWebviewText(page, /No accounts yet/, 45_000);
    await screenshot(page, 'vscode-panel-after-reload');
    assert.deepEqual(cspErrors, [], 'no Content Security Policy violations in the console');
  });

  it('an account whose token is refused raises one needs-sign-in alert with a Sign In action', async () => {
    await runCommand(page, 'Claude Router: Add Account from Token', 15_000, true);
    await answerInput(page, 'Add account from token', 'sk-ant-oat01-refused-by-the-ui-test-upstream', 10_000);
    // The name box stays open when focus moves (a webview finishing its load after the reload takes focus on a slow machine).
    await answerInput(page, 'Account name', 'refused', 30_000);
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 });
    // Once the router has the account, a request makes it try it: 401, no refresh token, so it needs sign-in.
    await waitForWebviewText(page, /refused/, 20_000);
    await sendRequest(proxyFile, 'ui-alert-session', null);
    const alert = /"refused" needs you to sign in again/;
    const toast = await waitForNotification(page, alert, 20_000);
    await toast.locator('.monaco-button', { hasText: 'Sign In' }).waitFor({ state: 'visible', timeout: 5_000 });
    await screenshot(page, 'vscode-alert-needs-sign-in');
    // More requests and refreshes: the same episode, no second alert.
    await sendRequest(proxyFile, 'ui-alert-session', null);
    await runCommand(page, 'Claude Router: Refresh');
    await waitForWebviewText(page, /2 matching decisions from the log/, 20_000);
    assert.equal(await page.locator('.notifications-toasts .notification-toast', { hasText: alert }).count(), 1, 'one alert per episode');
    // Its action starts signing in again to that account.
    await toast.locator('.monaco-button', { hasText: 'Sign In' }).click();
    // The browser is asked to open Claude's sign-in page (code-server confirms first), then the code is asked for.
    const dialog = page.getByRole('dialog').filter({ hasText: 'external website' });
    const codeBox = page.locator('.quick-input-widget', { hasText: 'Sign in with Claude' });
    // The dialog is modal: left open (it can come after the code box on a slow machine), it makes the workbench inert.
    await dialog.waitFor({ state: 'visible', timeout: 20_000 });
    assert.match(await dialog.innerText(), /claude\.ai\/oauth\/authorize/);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden', timeout: 10_000 });
    await codeBox.waitFor({ state: 'visible', timeout: 20_000 });
    await page.keyboard.press('Escape');
    await codeBox.waitFor({ state: 'hidden', timeout: 10_000 });
  });

  it('"Compare Routing Policies on My Traffic" shows each policy beside the traffic so far, in a table and a chart', async () => {
    // Nothing an earlier step left open (a quick input, a notification's focus) may take the command palette's keys.
    await page.keyboard.press('Escape');
    await page.keyboard.press('Escape');
    await runCommand(page, 'Claude Router: Compare Routing Policies on My Traffic');
    const body = await waitForWebviewText(page, /Routing policies on your traffic/, 60_000);
    const text = await body.innerText();
    assert.match(text, /actual \(the log\)/);
    // The sample traffic ran under the demo policy and a strategy picked in an earlier step: whichever it was is marked.
    assert.match(text, /\* [a-z]+(-[a-z]+)*(:[a-z]+-first)?/, 'the recorded policy is marked');
    assert.match(text, /Calibration \(the recorded policy replayed vs the log\)/);
    assert.ok((await body.locator('button', { hasText: 'Use this policy' }).count()) >= 9, 'a button for each other policy');
    assert.ok((await body.locator('figure svg rect').count()) >= 4 * 11, 'a bar per policy in each chart');
    // In a narrow editor the table scrolls on its own; scrolled to its end, its buttons are in view and so are the policy names.
    const scroller = body.locator('.table-scroll');
    await scroller.evaluate((el) => (el.scrollLeft = el.scrollWidth));
    const box = (await scroller.boundingBox())!;
    const name = (await body.locator('tbody th[scope=row]').last().boundingBox())!;
    const button = (await body.locator('button', { hasText: 'Use this policy' }).last().boundingBox())!;
    assert.ok(name.x >= box.x - 1 && name.x < box.x + 40, `the policy name stays at the table's left edge (${name.x} in ${box.x}…${box.x + box.width})`);
    assert.ok(button.x + button.width <= box.x + box.width + 1, `the last column's button is in view (${button.x + button.width} ≤ ${box.x + box.width})`);
    await screenshot(page, 'vscode-compare-policies-scrolled');
    await scroller.evaluate((el) => (el.scrollLeft = 0));
    await screenshot(page, 'vscode-compare-policies');
  });
});

/** A messages request to the extension's proxy with the address and key the terminal reported. */
/** `expected`: the status to assert, or null for any. */
async function sendRequest(proxyFile: string, session: string, expected: number | null = 200): Promise<void> {
  const [url, key] = fs.readFileSync(proxyFile, 'utf8').split('\n');
  const res = await fetch(`${url}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { 'x-claude-router-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-claude-code-session-id': session },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const text = await res.text();
  if (expected !== null) assert.equal(res.status, expected, text);
}

/** Waits until `cond` holds, checking every 100 ms; fails naming `what` after `ms`. */
async function until(cond: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The content frame of the visible webview (the status panel). */
function panelFrame(page: Page) {
  return page.locator('iframe.webview').filter({ visible: true }).first().contentFrame().locator('#active-frame').contentFrame();
}

/** Types `value` into the input box titled `title` (replacing what it holds) and accepts it. */
async function answerInput(page: Page, title: string, value: string, timeoutMs: number): Promise<void> {
  const input = page.locator('.quick-input-widget', { hasText: title }).locator('input').first();
  await input.waitFor({ state: 'visible', timeout: timeoutMs });
  await input.fill(value);
  // The box accepts what it holds: the value must be in it before Enter.
  const end = Date.now() + 5_000;
  while ((await input.inputValue()) !== value) {
    if (Date.now() > end) assert.fail(`the "${title}" box holds "${await input.inputValue()}", not "${value}"`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await input.press('Enter');
}

/** What a person would see: the notifications, an open quick input, the editor tabs and the visible webview's text. */
async function describeScreen(page: Page): Promise<string> {
  const texts = async (selector: string) =>
    (
      await page
        .locator(selector)
        .allInnerTexts()
        .catch(() => [])
    ).map((t) => t.replace(/\s+/g, ' ').trim());
  const webview = await page
    .locator('iframe.webview')
    .filter({ visible: true })
    .first()
    .contentFrame()
    .locator('#active-frame')
    .contentFrame()
    .locator('body')
    .innerText({ timeout: 2_000 })
    .catch((err: Error) => `(none: ${err.message.split('\n')[0]})`);
  return [
    `notifications: ${JSON.stringify(await texts('.notifications-toasts .notification-toast'))}`,
    `quick input: ${JSON.stringify(await texts('.quick-input-widget:visible'))}`,
    `dialogs: ${JSON.stringify(await texts('[role="dialog"]:visible'))}`,
    `tabs: ${JSON.stringify(await texts('.tabs-container .tab'))}`,
    `webview: ${webview.slice(0, 1_500)}`,
  ].join('\n');
}

/** The last lines of the extension's own output channel, from every window of the user-data dir. */
function extensionLogTail(userDataDir: string, lines = 60): string {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/Claude Router\.log$/.test(e.name)) found.push(p);
    }
  };
  try {
    walk(path.join(userDataDir, 'logs'));
  } catch {
    return '(no logs)';
  }
  return found
    .sort()
    .map((f) => `==> ${path.basename(path.dirname(f))}/${path.basename(f)}\n${fs.readFileSync(f, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')}`)
    .join('\n');
}
