/**
 * The product as a user gets it: the packaged VSIX installed into real VS Code
 * (code-server), driven through headless Chromium. With simulated accounts the
 * Accounts view lists them with utilisation, the status bar shows the pool,
 * "Show Routing Status" opens the panel with accounts and decisions, the
 * real Claude Code CLI started in an integrated terminal (so with the
 * extension's terminal environment) gets an answer through the extension's
 * proxy, and "Compare Routing Policies on My Traffic" shows the what-if table.
 * Screenshots go to test-artifacts/.
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

  before(async () => {
    temp = fs.mkdtempSync(path.join(os.tmpdir(), 'router-ui-'));
    const vsix = path.join(temp, 'claude-account-router.vsix');
    execFileSync(
      process.execPath,
      [path.join(REPO_ROOT, 'node_modules/@vscode/vsce/vsce'), 'package', '--no-dependencies', '--no-rewrite-relative-links', '--allow-missing-repository', '--out', vsix],
      { cwd: REPO_ROOT, stdio: 'pipe' },
    );
    const extensionsDir = path.join(temp, 'extensions');
    const userDataDir = path.join(temp, 'user-data');
    const workspace = path.join(temp, 'workspace');
    fs.mkdirSync(workspace);
    writeQuietSettings(userDataDir, { 'claudeRouter.port': await freePort(), 'terminal.integrated.defaultProfile.linux': 'bash' });
    await installVsix(vsix, extensionsDir, userDataDir);
    server = await startCodeServer({ userDataDir, extensionsDir, folder: workspace });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await openWorkbench(page, server.url, workspace);
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    if (temp) fs.rmSync(temp, { recursive: true, force: true });
  });

  it('routes between simulated accounts and shows them in the Accounts view and the status bar', async () => {
    const item = statusBarItemById(page, STATUS_ITEM_ID);
    await item.waitFor({ state: 'visible', timeout: 45_000 });
    // A fresh install is neutral: a "set up" entry, no warning colour, a label for screen readers.
    await page.locator('.statusbar', { hasText: /Claude Router: set up/ }).waitFor({ state: 'visible', timeout: 15_000 });
    await screenshot(page, 'vscode-status-bar-fresh-install');
    assert.doesNotMatch((await item.getAttribute('class')) ?? '', /warning-kind|error-kind/);
    assert.ok((await page.locator('.statusbar [aria-label*="no accounts yet"]').count()) > 0, 'the item has an accessibility label');
    // The empty pool's panel offers the next steps as buttons; one starts the simulated accounts.
    await runCommand(page, 'Claude Router: Show Routing Status');
    const empty = await waitForWebviewText(page, /No accounts yet/, 30_000);
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
    await page.locator('.statusbar', { hasText: /3\/3/ }).waitFor({ state: 'visible', timeout: 15_000 });
    assert.match((await item.innerText()).trim(), /3\/3 usable · \d+% left \(simulated\)/);
    await screenshot(page, 'vscode-accounts-view');
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
    await page.keyboard.type(`HOME='${home}' '${claude}' -p "say hi" > '${out}' 2>&1 < /dev/null; echo "exit=$?" >> '${out}'`);
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
    const body = await waitForWebviewText(page, /Last decisions/, 30_000);
    await waitForWebviewText(page, /accounts usable/);
    const text = await body.innerText();
    for (const label of ['work', 'personal', 'team']) assert.ok(text.includes(label), `panel lists ${label}`);
    assert.match(text, /Policy/);
    assert.match(text, /account-ranking\s+expiry-first\s+default/);
    assert.match(text, /(work|personal|team) · .* · success/);
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

  it('"Compare Routing Policies on My Traffic" shows each policy beside the traffic so far, in a table and a chart', async () => {
    await runCommand(page, 'Claude Router: Compare Routing Policies on My Traffic');
    const body = await waitForWebviewText(page, /Routing policies on your traffic/, 60_000);
    const text = await body.innerText();
    assert.match(text, /actual \(the log\)/);
    assert.match(text, /\* fill-first:expiry-first/, 'the recorded policy is marked');
    assert.match(text, /Calibration \(the recorded policy replayed vs the log\)/);
    assert.ok((await body.locator('button', { hasText: 'Use this policy' }).count()) >= 9, 'a button for each other policy');
    assert.ok((await body.locator('figure svg rect').count()) >= 4 * 11, 'a bar per policy in each chart');
    await screenshot(page, 'vscode-compare-policies');
  });
});
