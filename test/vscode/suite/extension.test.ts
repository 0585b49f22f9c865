/**
 * Runs inside the real extension host (code-server): activation, the proxy
 * answering, SecretStorage round trips, settings → policy, hot reload of
 * the config file, the terminal environment of a new integrated terminal,
 * and window takeover.
 */
import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ClaudeRouterApi } from '../../../src/vscode/extension';
import { SharedProxy } from '../../../src/proxy/http/sharedProxy';
import { silentLogger } from '../../../src/proxy/log';
import { stickyKeyHash } from '../../../src/routing/identify';
import { AccountsTreeProvider, SessionsTreeProvider } from '../../../src/vscode/treeViews';
import { freePort } from '../../support/net';

const EXTENSION_ID = 'claude-account-router.claude-account-router';

async function api(): Promise<ClaudeRouterApi> {
  const ext = vscode.extensions.getExtension<ClaudeRouterApi>(EXTENSION_ID);
  assert.ok(ext, 'the extension is installed');
  return ext.activate();
}

async function eventually<T>(fn: () => Promise<T | undefined> | T | undefined, ms = 8000, what = 'condition'): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function status(a: ClaudeRouterApi): Promise<any> {
  const res = await fetch(`${a.url()}/status`, { headers: { 'x-claude-router-key': a.clientKey() } });
  assert.equal(res.status, 200);
  return res.json();
}

const routing = () => vscode.workspace.getConfiguration('claudeRouter.routing');

/** What a new integrated terminal sees of the router's environment: ANTHROPIC_BASE_URL and CLAUDE_CODE_OAUTH_TOKEN. */
/** Every line of the `*.log` files under `dir` (the window's logs: the extension's output channel writes one). */
function logLines(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...logLines(p));
    else if (e.name.endsWith('.log')) out.push(...readFileSync(p, 'utf8').split('\n'));
  }
  return out;
}

async function newTerminalEnv(): Promise<{ url: string; key: string }> {
  const out = path.join(mkdtempSync(path.join(os.tmpdir(), 'router-term-')), 'env.txt');
  const terminal = vscode.window.createTerminal({ name: 'router-env-check' });
  try {
    terminal.sendText(`printf '%s\\n%s\\n' "$ANTHROPIC_BASE_URL" "$CLAUDE_CODE_OAUTH_TOKEN" > '${out}.tmp' && mv '${out}.tmp' '${out}'`);
    const text = await eventually(() => (existsSync(out) ? readFileSync(out, 'utf8') : undefined), 15_000, 'the terminal output');
    const [url, key] = text.split('\n');
    return { url, key };
  } finally {
    terminal.dispose();
  }
}

describe('Claude Router in the extension host', function () {
  this.timeout(30_000);

  it('activates and serves the proxy on its loopback port', async () => {
    const a = await api();
    assert.equal(a.service.role.kind, 'leader');
    const health = await fetch(`${a.url()}/health`);
    assert.equal(health.status, 200);
    const s = await status(a);
    assert.equal(s.service, 'claude-router');
    const denied = await fetch(`${a.url()}/status`);
    assert.equal(denied.status, 401, 'the local key is required');
  });

  it('keeps tokens in SecretStorage only and shows the account in the pool', async () => {
    const a = await api();
    const token = 'sk-ant-oat01-extension-host-test-token';
    await a.service.store.set('it-account', { accessToken: token, refreshToken: 'sk-ant-ort01-extension-host-test' });
    await a.service.accounts.upsert({ label: 'it-account', kind: 'oauth', fallback: false, enabled: true });
    assert.equal((await a.service.store.get('it-account'))?.accessToken, token, 'SecretStorage round trip');
    const s = await eventually(
      async () => {
        const st = await status(a);
        return st.accounts.some((x: any) => x.label === 'it-account') ? st : undefined;
      },
      8000,
      'the account in /status',
    );
    assert.ok(!JSON.stringify(s).includes(token), 'no token in /status');
    const settings = JSON.stringify(vscode.workspace.getConfiguration('claudeRouter'));
    assert.ok(!settings.includes(token), 'no token in settings');
    await a.service.accounts.remove('it-account');
    await a.service.store.delete('it-account');
    assert.equal(await a.service.store.get('it-account'), undefined);
  });

  it('applies a settings change live and keeps the last good policy on an invalid value', async () => {
    const a = await api();
    await routing().update('accountRanking', 'headroom-first', vscode.ConfigurationTarget.Global);
    await eventually(async () => (await status(a)).policy.accountRanking === 'headroom-first', 8000, 'live change');
    const good = await status(a);
    assert.equal(good.config.sources['account-ranking'], 'setting claudeRouter.routing.accountRanking');

    await routing().update('spillInflight', 500, vscode.ConfigurationTarget.Global);
    const rejected = await eventually(
      async () => {
        const st = await status(a);
        return st.config.lastReloadError ? st : undefined;
      },
      8000,
      'the rejected value',
    );
    assert.match(rejected.config.lastReloadError, /claudeRouter\.routing\.spillInflight/);
    assert.equal(rejected.policy.spillInflight, 0, 'the last good value stays');
    assert.equal(rejected.policy.accountRanking, 'headroom-first');
    assert.equal(rejected.config.generation, good.config.generation);

    await routing().update('spillInflight', undefined, vscode.ConfigurationTarget.Global);
    await routing().update('accountRanking', undefined, vscode.ConfigurationTarget.Global);
    await eventually(
      async () => {
        const st = await status(a);
        return st.policy.accountRanking === 'expiry-first' && st.config.lastReloadError === null;
      },
      8000,
      'back to defaults',
    );
  });

  it('hot-reloads claudeRouter.configFile when the file is edited, and keeps the last good version of it', async () => {
    const a = await api();
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'router-config-')), 'proxy-config.yaml');
    writeFileSync(file, 'routing:\n  spill-inflight: 3\n');
    const spill = () => a.service.engine!.config.policy.spillInflight;
    await vscode.workspace.getConfiguration('claudeRouter').update('configFile', file, vscode.ConfigurationTarget.Global);
    try {
      await eventually(() => spill() === 3, 8000, 'the file applied');
      writeFileSync(file, 'routing:\n  spill-inflight: 7\n');
      await eventually(() => spill() === 7, 2500, 'the edit applied within about 2 s');
      writeFileSync(file, 'routing:\n  spill-inflight: 700\n');
      const rejected = await eventually(
        async () => {
          const st = await status(a);
          return st.config.lastReloadError ? st : undefined;
        },
        2500,
        'the invalid edit reported',
      );
      assert.match(rejected.config.lastReloadError, /claudeRouter\.configFile/);
      assert.equal(spill(), 7, 'the last good value stays');
    } finally {
      await vscode.workspace.getConfiguration('claudeRouter').update('configFile', undefined, vscode.ConfigurationTarget.Global);
    }
    await eventually(() => spill() === 0, 8000, 'back to the default without the file');
  });

  it('Choose Routing Strategy writes the setting and /status shows the new strategy within 2 s; an argument skips the pick', async () => {
    const a = await api();
    try {
      const started = Date.now();
      const result = await vscode.commands.executeCommand('claudeRouter.chooseStrategy', 'usage-weighted');
      assert.deepEqual(result, { written: true, strategy: 'usage-weighted' });
      assert.equal(routing().inspect('strategy')?.globalValue, 'usage-weighted', 'written for the user');
      const st = await eventually(async () => ((await status(a)).policy.strategy === 'usage-weighted' ? status(a) : undefined), 2000, 'the new strategy in /status');
      assert.ok(Date.now() - started < 2000, `in force after ${Date.now() - started} ms`);
      assert.equal(st.config.sources.strategy, 'setting claudeRouter.routing.strategy');

      // fill-first takes the ranking as a second argument.
      await vscode.commands.executeCommand('claudeRouter.chooseStrategy', 'fill-first', 'headroom-first');
      await eventually(
        async () => {
          const p = (await status(a)).policy;
          return p.strategy === 'fill-first' && p.accountRanking === 'headroom-first';
        },
        2000,
        'fill-first with headroom-first',
      );
      assert.equal(routing().inspect('accountRanking')?.globalValue, 'headroom-first');

      const invalid = await vscode.commands.executeCommand('claudeRouter.chooseStrategy', 'no-such-strategy');
      assert.deepEqual(invalid, { written: false, reason: 'invalid' });
      assert.equal(routing().inspect('strategy')?.globalValue, 'fill-first', 'an invalid argument writes nothing');
    } finally {
      await routing().update('strategy', undefined, vscode.ConfigurationTarget.Global);
      await routing().update('accountRanking', undefined, vscode.ConfigurationTarget.Global);
    }
    await eventually(async () => (await status(a)).policy.accountRanking === 'expiry-first', 8000, 'back to the defaults');
  });

  it('Choose Routing Strategy reaches simulated accounts too: the serving engine applies it live', async () => {
    const a = await api();
    await vscode.commands.executeCommand('claudeRouter.trySimulated');
    try {
      assert.ok(a.service.simulated, 'simulated accounts serve');
      await vscode.commands.executeCommand('claudeRouter.chooseStrategy', 'round-robin');
      await eventually(async () => (await status(a)).policy.strategy === 'round-robin', 2000, 'the simulated engine on the new strategy');
      assert.equal(a.service.engine!.config.accounts.length, 3, 'it keeps its own accounts');
    } finally {
      await routing().update('strategy', undefined, vscode.ConfigurationTarget.Global);
      await vscode.commands.executeCommand('claudeRouter.stopSimulated');
    }
    await eventually(async () => (await status(a)).policy.strategy === 'fill-first', 8000, 'back to the default');
  });

  it('Choose Routing Strategy writes nothing when claudeRouter.configFile sets the strategy, and says so', async () => {
    const a = await api();
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'router-config-')), 'proxy-config.yaml');
    writeFileSync(file, 'routing:\n  strategy: reset-drain\n');
    await vscode.workspace.getConfiguration('claudeRouter').update('configFile', file, vscode.ConfigurationTarget.Global);
    try {
      await eventually(async () => (await status(a)).policy.strategy === 'reset-drain', 8000, 'the file applied');
      const result = await vscode.commands.executeCommand('claudeRouter.chooseStrategy', 'usage-weighted');
      assert.deepEqual(result, { written: false, reason: 'overridden', file });
      assert.equal(routing().inspect('strategy')?.globalValue, undefined, 'no setting that would have no effect');
      assert.equal((await status(a)).policy.strategy, 'reset-drain');
    } finally {
      await vscode.workspace.getConfiguration('claudeRouter').update('configFile', undefined, vscode.ConfigurationTarget.Global);
    }
    await eventually(async () => (await status(a)).policy.strategy === 'fill-first', 8000, 'back to the default without the file');
  });

  it('the Accounts view shows each account briefly, and its displayed status and eligibility for a new request in the tooltip', async () => {
    const a = await api();
    const tree = new AccountsTreeProvider(a.model);
    const label = 'it-status-account';
    const item = (what: string, test: (description: string) => boolean) =>
      eventually(
        () => {
          a.model.schedule(0);
          const node = tree.getChildren().find((n) => n.kind === 'account' && n.account.label === label);
          const it = node && tree.getTreeItem(node);
          return it && test(String(it.description)) ? it : undefined;
        },
        8000,
        what,
      );
    try {
      await a.service.store.set(label, { accessToken: 'sk-ant-oat01-status-view-test', refreshToken: 'sk-ant-ort01-status-view-test' });
      await a.service.accounts.upsert({ label, kind: 'oauth', fallback: false, enabled: true });
      // The description stays short (the windows only while Active and eligible); the tooltip and the screen reader get both.
      const active = await item('the account Active and eligible', (d) => d === '5h ? · 7d ?');
      assert.match((active.tooltip as vscode.MarkdownString).value, /status: Active · eligibility for a new request: eligible/);
      assert.match(active.accessibilityInformation!.label, /Active · eligible/);
      const s = await status(a);
      const report = s.accounts.find((x: any) => x.label === label);
      assert.equal(report.status, 'Active');
      assert.deepEqual(report.eligibility, { code: 'eligible' });

      await a.service.accounts.upsert({ label, kind: 'oauth', fallback: false, enabled: false });
      const disabled = await item('the account Disabled', (d) => d === 'Disabled · 5h ? · 7d ?');
      assert.match((disabled.tooltip as vscode.MarkdownString).value, /status: Disabled · eligibility for a new request: disabled/);
    } finally {
      tree.dispose();
      await a.service.accounts.remove(label);
      await a.service.store.delete(label);
    }
  });

  it('gives a new integrated terminal the environment that points Claude Code at the proxy', async function () {
    if (process.platform === 'win32') this.skip();
    const a = await api();
    const out = path.join(mkdtempSync(path.join(os.tmpdir(), 'router-term-')), 'env.txt');
    const terminal = vscode.window.createTerminal({ name: 'router-env-test' });
    try {
      // A temporary path: no space or quote to escape.
      terminal.sendText(`printf '%s\\n' "$ANTHROPIC_BASE_URL" "$CLAUDE_CODE_OAUTH_TOKEN" "$CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC" "$CLAUDE_CODE_GATEWAY_HINT_HEADERS" >${out}`);
      const text = await eventually(
        () => (existsSync(out) && readFileSync(out, 'utf8').split('\n').length >= 4 ? readFileSync(out, 'utf8') : undefined),
        15_000,
        'the terminal output',
      );
      const [url, key, traffic, hints] = text.split('\n');
      assert.deepEqual([url, key, traffic, hints], [a.url(), a.clientKey(), '1', '1'], 'base URL, key, no non-essential traffic, hint headers on');
    } finally {
      terminal.dispose();
    }
  });

  it('claudeRouter.terminal.subscriptionType reaches new terminals and the copied environment, for bash, PowerShell and cmd', async function () {
    if (process.platform === 'win32') this.skip();
    const a = await api();
    const terminal = vscode.workspace.getConfiguration('claudeRouter.terminal');
    try {
      await terminal.update('subscriptionType', 'pro', vscode.ConfigurationTarget.Global);
      const out = path.join(mkdtempSync(path.join(os.tmpdir(), 'router-term-')), 'plan.txt');
      const t = vscode.window.createTerminal({ name: 'router-plan-test' });
      t.sendText(`printf '%s\\n' "$CLAUDE_CODE_SUBSCRIPTION_TYPE" > '${out}.tmp' && mv '${out}.tmp' '${out}'`);
      const plan = await eventually(() => (existsSync(out) ? readFileSync(out, 'utf8').trim() : undefined), 15_000, 'the terminal output');
      t.dispose();
      assert.equal(plan, 'pro', 'a new terminal is told the plan');
      const posix = await vscode.commands.executeCommand<string>('claudeRouter.copyTerminalEnvironment', 'posix');
      assert.equal(await vscode.env.clipboard.readText(), posix);
      assert.match(posix, /^export CLAUDE_CODE_SUBSCRIPTION_TYPE='pro'$/m);
      assert.match(posix, /^export CLAUDE_CODE_GATEWAY_HINT_HEADERS='1'$/m);
      assert.match(posix, new RegExp(`^export CLAUDE_CODE_OAUTH_TOKEN='${a.clientKey()}'$`, 'm'));
      assert.match(
        await vscode.commands.executeCommand<string>('claudeRouter.copyTerminalEnvironment', 'powershell'),
        new RegExp(`^\\$env:ANTHROPIC_BASE_URL = '${a.url()}'$`, 'm'),
      );
      assert.match(await vscode.commands.executeCommand<string>('claudeRouter.copyTerminalEnvironment', 'cmd'), /^set "CLAUDE_CODE_SUBSCRIPTION_TYPE=pro"$/m);
    } finally {
      await terminal.update('subscriptionType', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  it('a second proxy for the same port follows the first and takes over when it is disposed', async () => {
    const a = await api();
    const port = await freePort();
    const opts = { host: '127.0.0.1', port, clientKey: a.clientKey(), log: silentLogger };
    const first = new SharedProxy(opts);
    const second = new SharedProxy(opts);
    try {
      first.setEngine(a.service.engine!);
      second.setEngine(a.service.engine!);
      assert.equal((await first.start()).kind, 'leader');
      assert.equal((await second.start()).kind, 'follower');
      await first.dispose();
      await eventually(() => second.role.kind === 'leader', 8000, 'takeover');
      assert.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200);
    } finally {
      await second.dispose();
      await first.dispose();
    }
  });

  it('routes between simulated accounts when asked to, and goes back', async () => {
    const a = await api();
    await vscode.commands.executeCommand('claudeRouter.trySimulated');
    const s = await eventually(
      async () => {
        const st = await status(a);
        return st.accounts.length === 3 && st.accounts.every((x: any) => x.session.used !== null) ? st : undefined;
      },
      10_000,
      'simulated accounts with utilisation',
    );
    assert.deepEqual(s.accounts.map((x: any) => x.label).sort(), ['personal', 'team', 'work']);
    const res = await fetch(`${a.url()}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'x-claude-router-key': a.clientKey(), 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-claude-code-session-id': 'sim-session' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(res.status, 200);
    assert.ok(['work', 'personal', 'team'].includes(res.headers.get('x-claude-router-account') ?? ''));
    await vscode.commands.executeCommand('claudeRouter.stopSimulated');
    assert.equal(a.service.simulated, false);
  });

  it("simulated accounts run a demo policy under the user's settings, and their sample traffic spreads over them", async () => {
    const a = await api();
    await vscode.commands.executeCommand('claudeRouter.trySimulated');
    try {
      const s = await status(a);
      assert.equal(s.policy.accountRanking, 'headroom-first');
      assert.equal(s.config.sources['account-ranking'], "simulated accounts' demo default");
      assert.equal(s.policy.sessionAffinity, true);
      // A setting the user chose wins over the demo default, live.
      await routing().update('accountRanking', 'expiry-first', vscode.ConfigurationTarget.Global);
      await eventually(async () => (await status(a)).config.sources['account-ranking'] === 'setting claudeRouter.routing.accountRanking', 2000, 'the setting in force');
      await routing().update('accountRanking', undefined, vscode.ConfigurationTarget.Global);
      await eventually(async () => (await status(a)).policy.accountRanking === 'headroom-first', 2000, 'back to the demo default');
      // The sample traffic that started with them: conversations bind, and more than one account serves.
      const served = await eventually(
        () => {
          const by = new Set(a.service.recentDecisions(200).flatMap((d) => (d.servedBy ? [d.servedBy] : [])));
          return by.size >= 2 ? by : undefined;
        },
        20_000,
        'requests on two accounts',
      );
      assert.ok(served.size >= 2);
      assert.ok((await status(a)).boundSessions >= 2, 'conversations are bound');
    } finally {
      await vscode.commands.executeCommand('claudeRouter.stopSimulated');
    }
    assert.equal((await status(a)).config.sources['account-ranking'], 'default', 'the real accounts never see the demo policy');
  });

  it('alerts once when every simulated account is used up, saying until when in local time', async () => {
    const a = await api();
    await vscode.commands.executeCommand('claudeRouter.trySimulated');
    try {
      const state = a.service.engine!.state;
      const now = Date.now();
      const before = a.alerts.shown.length;
      for (const [label, hours] of [
        ['work', 3],
        ['personal', 2],
        ['team', 4],
      ] as const) {
        state.setCooldown(label, { untilMs: now + hours * 3_600_000, reason: 'window_exhausted', setAtMs: now });
      }
      const alert = await eventually(() => a.alerts.shown.slice(before).find((m) => /used up/.test(m)), 8000, 'the alert');
      // A time on another day than today carries its weekday ("Wed 00:42"): the test may run two hours before midnight.
      const until = new Date(now + 2 * 3_600_000);
      const clock = until.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', hour12: false });
      const at = until.toDateString() === new Date(now).toDateString() ? clock : `${until.toLocaleDateString(undefined, { weekday: 'short' })} ${clock}`;
      assert.equal(
        alert,
        `Claude Router: All 3 accounts are used up. The first, "personal", is usable again at ${at}, in 1 h 59 min (window exhausted). Until then Claude Code gets "rate limited" answers.`,
      );
      for (let i = 0; i < 3; i++) await a.model.refresh();
      assert.equal(a.alerts.shown.slice(before).filter((m) => /used up/.test(m)).length, 1, 'once per episode');
    } finally {
      await vscode.commands.executeCommand('claudeRouter.stopSimulated');
    }
  });

  it('rotates the local client key: the old one gets 401 at once, the new one works, a new terminal gets it', async function () {
    if (process.platform === 'win32') this.skip();
    const a = await api();
    const old = a.clientKey();
    await vscode.commands.executeCommand('claudeRouter.rotateClientKey');
    const fresh = a.clientKey();
    assert.notEqual(fresh, old);
    assert.equal((await fetch(`${a.url()}/status`, { headers: { 'x-claude-router-key': old } })).status, 401, 'the old key is refused');
    assert.equal((await fetch(`${a.url()}/status`, { headers: { 'x-claude-router-key': fresh } })).status, 200, 'the new key works');
    const env = await newTerminalEnv();
    assert.equal(env.key, fresh, 'a new terminal gets the new key');
    assert.equal(env.url, a.url());
  });

  it('adopts a key another window stored in the shared SecretStorage: the previous one gets 401', async () => {
    const a = await api();
    const before = a.clientKey();
    const stored = `clr-${'x'.repeat(43)}`;
    // What a window that rotated the key does; this window hears of it through SecretStorage's change event.
    const secrets = (a.service as unknown as { context: vscode.ExtensionContext }).context.secrets;
    await secrets.store('claudeRouter.clientKey', stored);
    await eventually(() => a.clientKey() === stored, 8000, 'the stored key adopted');
    assert.equal((await fetch(`${a.url()}/status`, { headers: { 'x-claude-router-key': before } })).status, 401);
    assert.equal((await fetch(`${a.url()}/status`, { headers: { 'x-claude-router-key': stored } })).status, 200);
    await vscode.commands.executeCommand('claudeRouter.rotateClientKey'); // leave a random key behind
  });

  // Run only by test/vscode/extensionHost.test.ts's squatted-port case, which holds the port with a
  // squatter (test/support/squatter.ts) before the window starts and names it here; the suite's
  // runner (index.ts) leaves it out of every other run.
  it('squatted port: sends the squatter no key, gives new terminals no router environment, its alert shows what holds the port and picks another, and takes the port once it is free', async function () {
    const squatter = process.env.CLAUDE_ROUTER_TEST_SQUATTER;
    assert.ok(squatter, 'run with a squatter on the port (test/vscode/extensionHost.test.ts)');
    this.timeout(90_000);
    const a = await api();
    const role = a.service.role;
    assert.equal(role.kind, 'blocked');
    assert.match((role as { reason: string }).reason, /is taken by another program/);
    const empty = await newTerminalEnv();
    assert.deepEqual(empty, { url: '', key: '' }, 'no router environment while another program holds the port');
    assert.equal(
      a.alerts.shown.filter((m) => /is taken by another program\. New terminals are not sent through the router/.test(m)).length,
      1,
      'one alert, however often the retry finds the port taken',
    );
    const recorded = JSON.stringify(await (await fetch(`${squatter}/__recorded`)).json());
    assert.match(recorded, /\/identity\?nonce=/, 'the squatter was challenged');
    assert.ok(!recorded.includes(a.clientKey()), 'the squatter never received the key');

    // The alert's actions, as a click on each button runs them.
    const alert = a.alerts.shown.find((m) => /is taken by another program/.test(m))!;
    const squatterPort = Number(new URL(squatter).port);
    // "Show What Holds It": the log names the squatter's process (name and id, never its command line).
    await a.alerts.choose(alert, 'Show What Holds It');
    const logs = path.resolve((a.service as unknown as { context: vscode.ExtensionContext }).context.logUri.fsPath, '..', '..');
    const held = await eventually(() => logLines(logs).find((l) => l.includes(`port ${squatterPort} is held by`)), 10_000, 'the holder in the log');
    assert.match(held, new RegExp(`port ${squatterPort} is held by .*\\(process ${process.env.CLAUDE_ROUTER_TEST_SQUATTER_PID}\\)`));
    // "Use Another Port": a free port offered in an input box, accepted as offered, written to the setting.
    const config = () => vscode.workspace.getConfiguration('claudeRouter');
    // A focus change in the headless workbench can close the box before it is accepted: then the action runs again.
    for (let tries = 0; tries < 3 && config().get<number>('port') === squatterPort; tries++) {
      let chosen = false;
      const choosing = a.alerts.choose(alert, 'Use Another Port').then(() => (chosen = true));
      await eventually(
        async () => {
          await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
          return chosen || undefined;
        },
        15_000,
        'the port input box accepted',
      );
      await choosing;
    }
    const port = config().get<number>('port')!;
    assert.ok(port !== squatterPort && port >= 1024 && port <= 65535, `a new port: ${port}`);
    // The new port serves after a reload: until then new terminals still get no router environment.
    assert.deepEqual(await newTerminalEnv(), { url: '', key: '' }, 'no router environment after the port was changed either');
    await config().update('port', squatterPort, vscode.ConfigurationTarget.Global);

    await fetch(`${squatter}/__leave`);
    await eventually(() => a.service.role.kind === 'leader', 30_000, 'the window takes the freed port');
    const env = await newTerminalEnv();
    assert.deepEqual(env, { url: a.url(), key: a.clientKey() }, 'the environment is applied once the window leads');
  });

  it('the Sessions view shows a bound session by its key hash, shortened, never by its raw id', async () => {
    const a = await api();
    await routing().update('sessionAffinity', true, vscode.ConfigurationTarget.Global);
    const tree = new SessionsTreeProvider(a.model);
    try {
      await eventually(async () => (await status(a)).policy.sessionAffinity === true, 8000, 'affinity on');
      await vscode.commands.executeCommand('claudeRouter.trySimulated');
      const raw = 'raw-session-id-of-the-view-test';
      const res = await fetch(`${a.url()}/v1/messages?beta=true`, {
        method: 'POST',
        headers: { 'x-claude-router-key': a.clientKey(), 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-claude-code-session-id': raw },
        body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
      });
      assert.equal(res.status, 200);
      await res.text();
      const node = await eventually(
        () => {
          a.model.schedule(0);
          return tree.getChildren().find((n) => n.sessionId === stickyKeyHash(raw));
        },
        8000,
        'the bound session in the view',
      );
      const item = tree.getTreeItem(node);
      assert.equal(item.label, stickyKeyHash(raw).slice(0, 8));
      assert.ok(!JSON.stringify([item.label, item.id, item.tooltip, item.description]).includes(raw), 'no raw id in the view');
      assert.ok(!JSON.stringify(a.model.status).includes(raw) && !JSON.stringify(a.model.decisions).includes(raw), 'nor in what the panel shows');
    } finally {
      tree.dispose();
      await vscode.commands.executeCommand('claudeRouter.stopSimulated');
      await routing().update('sessionAffinity', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  it('Reset Cooldown on a cooling account of the Accounts view lifts its cooldown in the serving proxy', async () => {
    const a = await api();
    const tree = new AccountsTreeProvider(a.model);
    const label = 'it-reset-cooldown';
    const item = (what: string, test: (contextValue: string) => boolean) =>
      eventually(
        () => {
          a.model.schedule(0);
          const node = tree.getChildren().find((n) => n.kind === 'account' && n.account.label === label);
          const it = node && tree.getTreeItem(node);
          return it && test(String(it.contextValue)) ? it : undefined;
        },
        8000,
        what,
      );
    try {
      await a.service.store.set(label, { accessToken: 'sk-ant-oat01-reset-cooldown-test', refreshToken: 'sk-ant-ort01-reset-cooldown-test' });
      await a.service.accounts.upsert({ label, kind: 'oauth', fallback: false, enabled: true });
      await eventually(async () => (await status(a)).accounts.some((x: any) => x.label === label), 8000, 'the account in the pool');
      const now = Date.now();
      a.service.engine!.state.setCooldown(label, { untilMs: now + 3 * 86_400_000, reason: 'window_exhausted', windows: ['7d'], setAtMs: now });
      await item('the Reset Cooldown menu on the cooling account', (c) => /cooling/.test(c));
      assert.equal((await status(a)).accounts.find((x: any) => x.label === label).coolingReason, 'window_exhausted');

      await vscode.commands.executeCommand('claudeRouter.resetCooldown', label);
      const after = (await status(a)).accounts.find((x: any) => x.label === label);
      assert.equal(after.coolingUntil, null);
      assert.equal(after.usable, true);
      await item('no Reset Cooldown menu once it is lifted', (c) => !/cooling/.test(c));
    } finally {
      tree.dispose();
      await a.service.accounts.remove(label);
      await a.service.store.delete(label);
    }
  });
});
