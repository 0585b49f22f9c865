/**
 * Test support: real VS Code on a machine without internet — code-server (VS Code 1.139.1
 * in a browser, extensions in a Node extension host on this machine) driven by Debian's
 * headless Chromium through playwright-core.
 *
 * Install once with `scripts/install-code-server.sh` (`npm test`'s pretest runs it): it caches
 * code-server and its Node 24 under ~/.cache/claude-router and installs Debian's `chromium`.
 * Background: docs/testing.md#real-vs-code-without-internet (what was verified to work,
 * and why).
 *
 * - {@link startCodeServer}: one code-server on a free loopback port, in its own process
 *   group, with a config file and XDG folders of its own (nothing written under ~).
 * - {@link runExtensionTests}: the `@vscode/test-electron` equivalent — runs an extension's
 *   mocha suite (a module exporting `run()`) inside the real extension host and resolves
 *   with its exit code.
 * - {@link installVsix}, {@link openWorkbench} and the small Playwright helpers: UI tests of
 *   the packaged extension (command palette, status bar, screenshots in test-artifacts/).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { format } from 'node:util';
import type { Browser, LaunchOptions, Locator, Page } from 'playwright-core';
import { freePort } from '../support/net';

/** code-server version the install script pins (= VS Code 1.139.1). */
export const CODE_SERVER_VERSION = '4.139.1';
/** The script that installs code-server and Chromium; named in errors. */
export const CODE_SERVER_INSTALL_SCRIPT = 'scripts/install-code-server.sh';
/** Debian's Chromium (apt-get install chromium); never `npx playwright install`. */
export const CHROMIUM_PATH = '/usr/bin/chromium';
/** Chromium flags that keep a headless run off the network and quiet. */
export const CHROMIUM_ARGS: readonly string[] = Object.freeze([
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]);

/** The repository root (this file compiles to out/test/vscode/codeServer.js). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
/** Where screenshots go by default; kept by CI as artifacts. */
export const ARTIFACTS_DIR = path.join(REPO_ROOT, 'test-artifacts');

/**
 * The launcher written by the install script: `$CODE_SERVER_LAUNCHER` if set, else
 * `${CLAUDE_ROUTER_CACHE:-~/.cache/claude-router}/code-server-4.139.1/bin/code-server-node24`.
 * Throws, naming the install script, when it is missing.
 */
export function codeServerLauncher(): string {
  const explicit = process.env.CODE_SERVER_LAUNCHER;
  const cache = process.env.CLAUDE_ROUTER_CACHE || path.join(os.homedir(), '.cache', 'claude-router');
  const launcher = explicit || path.join(cache, `code-server-${CODE_SERVER_VERSION}`, 'bin', 'code-server-node24');
  if (!isExecutable(launcher)) {
    throw new Error(`code-server launcher not found at ${launcher}: run \`bash ${CODE_SERVER_INSTALL_SCRIPT}\` first`);
  }
  if (!isExecutable(CHROMIUM_PATH)) {
    throw new Error(`${CHROMIUM_PATH} not found: run \`bash ${CODE_SERVER_INSTALL_SCRIPT}\` (apt-get install chromium)`);
  }
  return launcher;
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------
// Process groups: everything we start is killed on stop, and on the test process's exit.

const liveGroups = new Set<number>();
const liveTempDirs = new Set<string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last resort when the process exits early (the shim's SIGTERM, a test that forgot
  // stop()): synchronous SIGKILL of every group still running, then their temp folders.
  process.on('exit', () => {
    for (const pgid of liveGroups) killTree(pgid, 'SIGKILL');
    for (const dir of liveTempDirs) {
      try {
        fs.rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
      } catch {
        // best effort at exit
      }
    }
  });
}

function registerGroup(pid: number): void {
  installExitHook();
  liveGroups.add(pid);
}

/** mkdtemp in the OS temp folder, removed by {@link removeTempDir} or at process exit. */
function makeTempDir(prefix: string): string {
  installExitHook();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  liveTempDirs.add(dir);
  return dir;
}

function removeTempDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
  liveTempDirs.delete(dir);
}

/** Pids of the live descendants of `root` (Linux /proc; empty elsewhere). */
function descendants(root: number): number[] {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces and parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(e));
      children.set(ppid, list);
    } catch {
      // the process ended meanwhile
    }
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length) {
    for (const c of children.get(queue.shift()!) ?? []) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}

/**
 * Signal the process group `pgid` and every descendant of its leader (terminals started
 * by the pty host run in sessions of their own, outside the group).
 */
function killTree(pgid: number, signal: NodeJS.Signals): void {
  for (const pid of descendants(pgid)) {
    try {
      process.kill(pid, signal);
    } catch {
      // gone already
    }
  }
  try {
    process.kill(-pgid, signal);
  } catch {
    // gone already
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

async function killGroup(pgid: number, graceMs = 3000): Promise<void> {
  const stray = descendants(pgid);
  killTree(pgid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (groupAlive(pgid) && Date.now() < deadline) await delay(50);
  killTree(pgid, 'SIGKILL');
  for (const pid of stray) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  const hardDeadline = Date.now() + 5000;
  while (groupAlive(pgid) && Date.now() < hardDeadline) await delay(50);
  liveGroups.delete(pgid);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function httpStatus(url: string, timeoutMs = 2000): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('timeout', () => req.destroy(new Error('timeout')));
    req.once('error', reject);
  });
}

/** Environment for code-server: its own XDG folders, so that nothing lands under ~. */
function isolatedEnv(stateDir: string, extra?: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    XDG_CONFIG_HOME: path.join(stateDir, 'xdg-config'),
    XDG_DATA_HOME: path.join(stateDir, 'xdg-data'),
    XDG_CACHE_HOME: path.join(stateDir, 'xdg-cache'),
    ...extra,
  };
  // Variables of an enclosing VS Code (or of mocha's runner) must not leak into the host.
  for (const k of Object.keys(env)) {
    if (k.startsWith('VSCODE_') || k === 'ELECTRON_RUN_AS_NODE') delete env[k];
  }
  return env;
}

// ---------------------------------------------------------------------------------------
// code-server

export interface StartCodeServerOptions {
  userDataDir: string;
  extensionsDir: string;
  /** Folder the server opens by default (also the default of {@link openWorkbench}). */
  folder: string;
  /** `--vscode-option enable-smoke-test-driver`: needed for the `payload=` test runs. */
  smokeTestDriver?: boolean;
  /** Extra environment for code-server and so for the extension host and terminals. */
  env?: Record<string, string>;
  /** How long to wait for the first HTTP answer. Default 45 000 ms. */
  startTimeoutMs?: number;
  /**
   * `--reconnection-grace-time` (s): how long the extension host of a page that went away (a
   * reload) lives on, waiting for it to reconnect. code-server's default is 3 hours.
   */
  reconnectionGraceTimeS?: number;
}

export interface CodeServer {
  /** `http://127.0.0.1:PORT` (no trailing slash). */
  url: string;
  port: number;
  /** code-server's own stdout+stderr so far. */
  output(): string;
  /** Kill the whole process group (and terminals' sessions); idempotent. */
  stop(): Promise<void>;
}

export async function startCodeServer(opts: StartCodeServerOptions): Promise<CodeServer> {
  const launcher = codeServerLauncher();
  let lastError: unknown;
  // A free port may be taken between probing and code-server's listen: try a few.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(launcher, opts, await freePort());
    } catch (err) {
      lastError = err;
      if (!(err instanceof Error && /EADDRINUSE/.test(err.message))) throw err;
    }
  }
  throw lastError;
}

async function startOnce(launcher: string, opts: StartCodeServerOptions, port: number): Promise<CodeServer> {
  const stateDir = makeTempDir('code-server-state-');
  const configFile = path.join(stateDir, 'config.yaml');
  fs.writeFileSync(configFile, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  fs.mkdirSync(opts.userDataDir, { recursive: true });
  fs.mkdirSync(opts.extensionsDir, { recursive: true });
  const args = [
    '--config',
    configFile,
    '--auth',
    'none',
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    '--user-data-dir',
    opts.userDataDir,
    '--extensions-dir',
    opts.extensionsDir,
  ];
  if (opts.smokeTestDriver) args.push('--vscode-option', 'enable-smoke-test-driver');
  if (opts.reconnectionGraceTimeS !== undefined) args.push('--reconnection-grace-time', String(opts.reconnectionGraceTimeS));
  args.push(opts.folder);

  const child: ChildProcess = spawn(launcher, args, {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: isolatedEnv(stateDir, opts.env),
  });
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
  const pgid = child.pid;
  if (pgid === undefined) {
    removeTempDir(stateDir);
    throw new Error(`could not start ${launcher}: ${(await spawnError).message}`);
  }
  registerGroup(pgid);

  let out = '';
  const collect = (d: Buffer) => {
    out += d.toString();
    if (out.length > 1_000_000) out = out.slice(-500_000);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  let exited: string | undefined;
  child.once('exit', (code, signal) => {
    exited = `code-server exited (${code ?? signal})`;
  });
  child.once('error', (err) => {
    exited = `code-server failed: ${err.message}`;
  });

  let stopped: Promise<void> | undefined;
  const server: CodeServer = {
    url: `http://127.0.0.1:${port}`,
    port,
    output: () => out,
    stop: () => {
      stopped ??= killGroup(pgid).finally(() => removeTempDir(stateDir));
      return stopped;
    },
  };

  const deadline = Date.now() + (opts.startTimeoutMs ?? 45_000);
  for (;;) {
    if (exited !== undefined) {
      await server.stop();
      throw new Error(`${exited} before answering on port ${port}:\n${tail(out)}`);
    }
    try {
      // /healthz answers once the HTTP server is up; the workbench page itself renders lazily.
      const status = await httpStatus(`${server.url}/healthz`);
      if (status === 200) return server;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`code-server did not answer on port ${port} within ${opts.startTimeoutMs ?? 45_000} ms:\n${tail(out)}`);
    }
    await delay(100);
  }
}

function tail(text: string, lines = 40): string {
  return text.split('\n').slice(-lines).join('\n');
}

/** Run code-server's CLI once (e.g. `--install-extension`) and resolve with its output. */
function runCodeServerCli(args: string[], timeoutMs = 120_000): Promise<string> {
  const launcher = codeServerLauncher();
  const stateDir = makeTempDir('code-server-cli-');
  const configFile = path.join(stateDir, 'config.yaml');
  fs.writeFileSync(configFile, 'auth: none\ncert: false\n');
  return new Promise<string>((resolve, reject) => {
    const child = spawn(launcher, ['--config', configFile, ...args], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: isolatedEnv(stateDir),
    });
    if (child.pid !== undefined) registerGroup(child.pid);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => {
      if (child.pid !== undefined) killTree(child.pid, 'SIGKILL');
    }, timeoutMs);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const done = child.pid !== undefined ? killGroup(child.pid, 500) : Promise.resolve();
      void done.finally(() => {
        removeTempDir(stateDir);
        if (code === 0) resolve(out);
        else reject(new Error(`code-server ${args.join(' ')} failed (${code ?? signal}):\n${tail(out)}`));
      });
    });
  });
}

/** `code-server --install-extension <vsix>` into the given folders (what users get). */
export async function installVsix(vsixPath: string, extensionsDir: string, userDataDir: string): Promise<void> {
  fs.mkdirSync(extensionsDir, { recursive: true });
  fs.mkdirSync(userDataDir, { recursive: true });
  const out = await runCodeServerCli(['--extensions-dir', extensionsDir, '--user-data-dir', userDataDir, '--install-extension', path.resolve(vsixPath)]);
  if (!/successfully installed/i.test(out)) {
    throw new Error(`installing ${vsixPath} did not report success:\n${tail(out)}`);
  }
}

/**
 * User settings for a quiet, offline test workbench: no welcome page or walkthroughs
 * competing for focus, no update or gallery checks, no chat / agent host / GitHub sign-in.
 */
export const QUIET_SETTINGS: Readonly<Record<string, unknown>> = Object.freeze({
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'security.workspace.trust.enabled': false,
  'chat.disableAIFeatures': true,
  'chat.agentHost.enabled': false,
  'github.gitAuthentication': false,
  'git.enabled': false,
});

/** Write `<userDataDir>/User/settings.json`: {@link QUIET_SETTINGS} plus `extra`. */
export function writeQuietSettings(userDataDir: string, extra: Record<string, unknown> = {}): void {
  fs.mkdirSync(path.join(userDataDir, 'User'), { recursive: true });
  writeJson(path.join(userDataDir, 'User', 'settings.json'), { ...QUIET_SETTINGS, ...extra });
}

// ---------------------------------------------------------------------------------------
// Browser

/**
 * Launch Debian's Chromium headless with {@link CHROMIUM_ARGS}. Its XDG folders point at a
 * temporary folder (removed when the browser closes), so that nothing (e.g. crashpad's
 * ~/.config/chromium/Crash Reports) lands under ~.
 */
export async function launchChromium(extra?: LaunchOptions): Promise<Browser> {
  // Required lazily: plain unit tests never load playwright.
  const { chromium } = await import('playwright-core');
  const home = makeTempDir('chromium-home-');
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  Object.assign(env, {
    XDG_CONFIG_HOME: path.join(home, 'config'),
    XDG_CACHE_HOME: path.join(home, 'cache'),
    XDG_DATA_HOME: path.join(home, 'data'),
  });
  let browser: Browser;
  try {
    browser = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [...CHROMIUM_ARGS],
      env,
      ...extra,
    });
  } catch (err) {
    removeTempDir(home);
    throw err;
  }
  browser.on('disconnected', () => removeTempDir(home));
  return browser;
}

/** `http://127.0.0.1:PORT/?folder=<abs>` (plus extra query pairs). */
export function workbenchUrl(url: string, folder: string, query: Record<string, string> = {}): string {
  const params = new URLSearchParams({ folder: path.resolve(folder), ...query });
  return `${url}/?${params.toString()}`;
}

/** Open the workbench on `folder` and wait until its status bar has rendered. */
export async function openWorkbench(page: Page, url: string, folder: string, timeoutMs = 45_000): Promise<void> {
  await page.goto(workbenchUrl(url, folder), { timeout: timeoutMs });
  await page.locator('.monaco-workbench .statusbar').waitFor({ state: 'visible', timeout: timeoutMs });
}

/**
 * Run a command from the command palette: F1, type its title (as shown, e.g.
 * `Claude Router: Show Routing Status`), wait for the matching entry, Enter. Then wait for the
 * palette to close, unless the command opens a quick pick of its own (`opensQuickPick`).
 */
export async function runCommand(page: Page, title: string, timeoutMs = 15_000, opensQuickPick = false): Promise<void> {
  const input = page.locator('.quick-input-widget input');
  await retryWhileQuickInputCloses(async () => {
    // Focus the workbench first: F1 is ignored while focus is outside it (e.g. on <body>).
    await page
      .locator('.monaco-workbench')
      .focus()
      .catch(() => undefined);
    await page.keyboard.press('F1');
    await input.waitFor({ state: 'visible', timeout: timeoutMs });
    await input.fill(`>${title}`, { timeout: 5_000 });
    const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first();
    await row.waitFor({ state: 'visible', timeout: timeoutMs });
    // The first row is focused once the list has filtered to the typed text.
    await page.locator('.quick-input-widget .monaco-list-row.focused', { hasText: title }).first().waitFor({ state: 'visible', timeout: timeoutMs });
  });
  await page.keyboard.press('Enter');
  if (opensQuickPick)
    await page.locator('.quick-input-widget input').and(page.locator(':not([aria-label="Type the name of a command to run."])')).waitFor({ state: 'visible', timeout: timeoutMs });
  else await input.waitFor({ state: 'hidden', timeout: timeoutMs });
}

/**
 * Runs `step` (which opens a quick input and types into it) again, up to `attempts` times in all,
 * when the quick input closes under it: a focus change that lands late on a loaded machine (a
 * click in a webview, a notification) closes it, and a person would simply open it again.
 * @throws the last attempt's error
 */
export async function retryWhileQuickInputCloses(step: () => Promise<void>, attempts = 3): Promise<void> {
  for (let i = 1; ; i++) {
    try {
      return await step();
    } catch (err) {
      if (i >= attempts || !/inert|not visible|Timeout/i.test(String(err))) throw err;
    }
  }
}

/**
 * Wait for a status bar item whose visible text contains `text`; returns its locator.
 * Codicons (`$(pulse)`) are not part of the visible text; the tooltip / accessibility label
 * is not either (use {@link statusBarItemById} for an item whose text changes).
 */
export async function waitForStatusBarItem(page: Page, text: string | RegExp, timeoutMs = 45_000): Promise<Locator> {
  const item = page.locator('.statusbar .statusbar-item', { hasText: text }).first();
  await item.waitFor({ state: 'visible', timeout: timeoutMs });
  return item;
}

/**
 * The status bar item an extension created with `createStatusBarItem(id, …)`: its element id
 * is `<publisher>.<name>.<id>`, e.g. `claude-account-router.claude-account-router.claudeRouter.pool`.
 */
export function statusBarItemById(page: Page, elementId: string): Locator {
  return page.locator(`.statusbar [id="${elementId.replace(/["\\]/g, '\\$&')}"]`);
}

/**
 * Wait until a webview (e.g. a panel the extension opened) shows `text`; returns the
 * locator of its document body. Looks in the first visible webview. Webviews are two nested iframes: the host `iframe.webview`
 * and the content `#active-frame`.
 */
export async function waitForWebviewText(page: Page, text: string | RegExp, timeoutMs = 30_000): Promise<Locator> {
  const body = page.locator('iframe.webview').filter({ visible: true }).first().contentFrame().locator('#active-frame').contentFrame().locator('body', { hasText: text });
  // The visible webview (another editor tab's webview is hidden).
  await body.first().waitFor({ state: 'visible', timeout: timeoutMs });
  return body.first();
}

/** Wait for a notification toast whose text contains `text`; returns its locator. */
export async function waitForNotification(page: Page, text: string | RegExp, timeoutMs = 30_000): Promise<Locator> {
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();
  await toast.waitFor({ state: 'visible', timeout: timeoutMs });
  return toast;
}

/** Screenshot the page to `test-artifacts/<name>.png` (or `dir`); returns the path. */
export async function screenshot(page: Page, name: string, dir: string = ARTIFACTS_DIR): Promise<string> {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name.replace(/[^\w.-]+/g, '_')}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

// ---------------------------------------------------------------------------------------
// Extension tests inside the real extension host

export interface RunExtensionTestsOptions {
  /** Folder of the extension under development (holds its package.json). */
  extensionDevelopmentPath: string;
  /**
   * Module exporting `run(): Promise<void>`, loaded in the extension host. Keep it inside
   * the extension folder (it then runs in the same, Node, extension host).
   */
  extensionTestsPath: string;
  /** Workspace folder to open. Default: a fresh empty temporary folder. */
  folder?: string;
  /** Hard limit for the whole run, start-up included. Default 120 000 ms. */
  timeoutMs?: number;
  /** Where a screenshot (and the workbench's logs) go on timeout or failure. Default test-artifacts/. */
  screenshotDir?: string;
  /** Extra environment for code-server and so for the extension host. */
  env?: Record<string, string>;
  /** Extra extensions folder (e.g. with installed dependencies). Default: a fresh empty one. */
  extensionsDir?: string;
  /**
   * User data folder. Default: a fresh temporary one, deleted afterwards (settings and
   * state persist in it, so share one between runs only on purpose).
   */
  userDataDir?: string;
  /** Print lines as they arrive (default: to stdout). */
  log?: (line: string) => void;
  /**
   * Also print the workbench's own chatter (connection set-up, offline gallery lookups,
   * chat/agent-host messages). Default: `CLAUDE_ROUTER_VSCODE_VERBOSE=1`.
   */
  verbose?: boolean;
}

/**
 * Workbench messages that say nothing about the extension under test: connection
 * set-up, the failed gallery lookups of an offline machine, chat and agent-host chatter.
 */
const WORKBENCH_NOISE =
  /^(Resolv(ing|ed) connection token|Creating a socket|\[reconnection-grace-time\]|Updating additional builtin extensions cache|\[Service Worker\]|\[AgentHost|\[AccountPolicyGate\]|\[ChatModelSelection\]|Timed out waiting for authentication provider 'github'|getaddrinfo (ENOTFOUND|EAI_AGAIN) open-vsx\.org|Creation of workbench contribution '[^']*' took)/;

/**
 * Run an extension's test module in code-server's real extension host, as
 * `@vscode/test-electron`'s `runTests` does with desktop VS Code. Resolves with the test
 * run's exit code (0 = passed); rejects on timeout or when the workbench cannot start.
 * Extension host output (`console.log` of the tests, mocha's reporter) is printed as
 * `[vscode] ...` lines. Everything it starts is stopped and its temporary folders removed.
 */
export async function runExtensionTests(opts: RunExtensionTestsOptions): Promise<number> {
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const log = opts.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const screenshotDir = opts.screenshotDir ?? ARTIFACTS_DIR;
  const devPath = path.resolve(opts.extensionDevelopmentPath);
  const testsPath = path.resolve(opts.extensionTestsPath);
  if (!fs.existsSync(path.join(devPath, 'package.json'))) {
    throw new Error(`no package.json in extensionDevelopmentPath ${devPath}`);
  }
  if (!fs.existsSync(testsPath) && !fs.existsSync(`${testsPath}.js`)) {
    throw new Error(`extensionTestsPath ${testsPath} does not exist`);
  }

  const temp = makeTempDir('vscode-ext-tests-');
  const userDataDir = opts.userDataDir ? path.resolve(opts.userDataDir) : path.join(temp, 'user-data');
  const verbose = opts.verbose ?? process.env.CLAUDE_ROUTER_VSCODE_VERBOSE === '1';
  const extensionsDir = opts.extensionsDir ?? path.join(temp, 'extensions');
  const folder = opts.folder ?? path.join(temp, 'workspace');
  fs.mkdirSync(folder, { recursive: true });
  // Settings persist in the user data folder: write ours only into a new one.
  if (!fs.existsSync(path.join(userDataDir, 'User', 'settings.json'))) writeQuietSettings(userDataDir);

  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;
  let timer: NodeJS.Timeout | undefined;
  const label = `${path.basename(devPath)}-${Date.now()}`;
  try {
    server = await startCodeServer({
      userDataDir,
      extensionsDir,
      folder,
      smokeTestDriver: true,
      env: opts.env,
    });
    const remote = (p: string) => `vscode-remote://127.0.0.1:${server!.port}${p}`;
    const payload = JSON.stringify([
      ['extensionDevelopmentPath', remote(devPath)],
      ['extensionTestsPath', remote(testsPath)],
      ['skipWelcome', 'true'],
      ['skipReleaseNotes', 'true'],
    ]);

    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();

    let settle!: (v: { code: number; logs?: unknown }) => void;
    const finished = new Promise<{ code: number; logs?: unknown }>((resolve) => (settle = resolve));
    await page.exposeFunction('codeAutomationLog', (type: unknown, args: unknown) => {
      const text = Array.isArray(args) ? format(...args) : format(args);
      if (!verbose && WORKBENCH_NOISE.test(text)) return;
      for (const line of text.replace(/\n$/, '').split('\n')) log(`[vscode${type === 'info' ? '' : `:${String(type)}`}] ${line}`);
    });
    await page.exposeFunction('codeAutomationExit', (code: unknown, logs: unknown) => {
      settle({ code: typeof code === 'number' ? code : Number(code ?? 1), logs });
    });
    page.on('pageerror', (err) => log(`[browser:pageerror] ${err.message}`));

    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    await page.goto(workbenchUrl(server.url, folder, { payload }), { timeout: timeoutMs });
    const result = await Promise.race([finished, timedOut]);
    if (result === 'timeout') {
      const shot = await screenshot(page, `extension-tests-timeout-${label}`, screenshotDir).catch(() => undefined);
      writeServerLog(server, screenshotDir, label);
      throw new Error(
        `extension tests did not finish within ${timeoutMs} ms` +
          (shot ? `; screenshot ${shot}` : '') +
          `\ncode-server output (tail):\n${tail(server.output())}` +
          `\nextension host log (tail):\n${tail(readExtHostLogs(userDataDir))}`,
      );
    }
    if (result.code !== 0) {
      const shot = await screenshot(page, `extension-tests-failed-${label}`, screenshotDir).catch(() => undefined);
      writeWorkbenchLogs(result.logs, screenshotDir, label);
      writeServerLog(server, screenshotDir, label);
      log(`[runExtensionTests] exit code ${result.code}${shot ? `; screenshot ${shot}` : ''}`);
      const hostLog = readExtHostLogs(userDataDir);
      if (hostLog) log(`[runExtensionTests] extension host log (tail):\n${tail(hostLog)}`);
    }
    return result.code;
  } finally {
    if (timer) clearTimeout(timer);
    await browser?.close().catch(() => undefined);
    await server?.stop();
    removeTempDir(temp);
  }
}

function writeJson(file: string, value: unknown): void {
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** The server-side extension host logs of a user-data-dir, concatenated. */
export function readExtHostLogs(userDataDir: string): string {
  const found: string[] = [];
  const walk = (dir: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/exthost|remoteagent/i.test(e.name) && e.name.endsWith('.log')) found.push(p);
    }
  };
  walk(path.join(userDataDir, 'logs'));
  return found
    .sort()
    .map((f) => `==> ${path.relative(userDataDir, f)} <==\n${fs.readFileSync(f, 'utf8')}`)
    .join('\n');
}

function writeServerLog(server: CodeServer, dir: string, label: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `code-server-${label}.log`), server.output());
  } catch {
    // best effort
  }
}

function writeWorkbenchLogs(logs: unknown, dir: string, label: string): void {
  if (!Array.isArray(logs)) return;
  try {
    const target = path.join(dir, `workbench-logs-${label}`);
    for (const entry of logs as Array<{ relativePath?: unknown; contents?: unknown }>) {
      if (typeof entry?.relativePath !== 'string' || typeof entry.contents !== 'string') continue;
      const file = path.join(target, entry.relativePath.replace(/\.\.(\/|\\)/g, ''));
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, entry.contents);
    }
  } catch {
    // best effort
  }
}
