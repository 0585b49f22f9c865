/**
 * `claude-router accounts rename|enable|disable|move|primary|logout|add|remove` through the BUILT
 * CLI, beside a running proxy: each command changes the state directory and the proxy's `/status`
 * within 2 s, with where each value came from; a value the config file sets wins (the command is
 * refused, nothing written); a broken `accounts.json` keeps the last good account set.
 */
import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startFakeUpstream, type FakeUpstream, type SimAccountSpec } from '../../src/sim';
import type { StatusReport } from '../../src/proxy/status/status';
import { proxyConfigYaml, runCli, spawnCli, waitForStdout, type CliProcess } from '../support/routerCli';

describe('e2e: claude-router accounts edits beside a running proxy', function () {
  this.timeout(60_000);

  const id = randomBytes(4).toString('hex');
  const spec: SimAccountSpec[] = ['work', 'personal', 'third'].map((label) => ({
    label,
    accessToken: `sk-ant-oat01-edits-${label}-${id}`,
    refreshToken: `sk-ant-ort01-edits-${label}-${id}`,
  }));
  let dir: string;
  let stateDir: string;
  let env: Record<string, string>;
  let sim: FakeUpstream;
  const cleanups: (() => Promise<void> | void)[] = [];
  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-edits-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(path.join(dir, 'xdg'));
    stateDir = path.join(dir, 'xdg', 'claude-router');
    env = { XDG_CONFIG_HOME: path.join(dir, 'xdg') };
    sim = await startFakeUpstream({ accounts: spec });
    cleanups.push(() => sim.close());
  });
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  const cli = (args: string[], input?: string) => runCli(args, 10_000, { env, input });
  async function add(label: string): Promise<void> {
    const a = spec.find((s) => s.label === label)!;
    const r = await cli(['accounts', 'add', '--label', label], `${a.accessToken}\n${a.refreshToken}\n`);
    assert.equal(r.code, 0, r.stderr);
  }
  async function startProxy(args: string[] = []): Promise<CliProcess> {
    const proc = spawnCli(['start', '--port', '0', '--upstream-url', sim.url, '--token-url', sim.tokenUrl, ...args], { env });
    cleanups.push(() => proc.stop());
    await waitForStdout(proc, /^listening on /m);
    return proc;
  }
  async function status(args: string[] = []): Promise<StatusReport> {
    const r = await cli(['status', '--json', ...args]);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as StatusReport;
  }
  /** Polls `/status` until `ok` holds; fails after 2 s (the bound) with the last report. */
  async function within2s(what: string, ok: (s: StatusReport) => boolean, args: string[] = []): Promise<StatusReport> {
    const end = Date.now() + 2_000;
    for (;;) {
      const s = await status(args);
      if (ok(s)) return s;
      if (Date.now() > end) assert.fail(`not within 2 s: ${what}\n${JSON.stringify(s.accounts.map((a) => [a.label, a.enabled, a.needsSignIn]))} ${s.config.lastReloadError}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const labels = (s: StatusReport) => s.accounts.map((a) => a.label);
  const account = (s: StatusReport, label: string) => s.accounts.find((a) => a.label === label)!;
  const credentialLabels = () => Object.keys((JSON.parse(readFileSync(path.join(stateDir, 'credentials.json'), 'utf8')) as { accounts: object }).accounts);

  it('disable, enable, move, primary, rename, logout, add and remove each reach the running proxy within 2 s', async () => {
    await add('work');
    await add('personal');
    const proxy = await startProxy();

    assert.equal((await cli(['accounts', 'disable', 'personal'])).code, 0);
    let s = await within2s('personal disabled', (x) => account(x, 'personal').enabled === false);
    assert.equal(account(s, 'personal').status, 'Disabled');
    assert.deepEqual(account(s, 'personal').origin, { account: 'state-dir', enabled: 'state-dir', position: 'state-dir' });
    const disabledPrimary = await cli(['accounts', 'primary', 'personal']);
    assert.equal(disabledPrimary.code, 0, disabledPrimary.stderr);
    assert.match(disabledPrimary.stderr, /^warning: "personal" is disabled: it serves as the primary once enabled/m);
    assert.equal((await cli(['accounts', 'primary', '--clear'])).code, 0);
    assert.equal((await cli(['accounts', 'enable', 'personal'])).code, 0);
    await within2s('personal enabled again', (x) => account(x, 'personal').enabled);

    const moved = await cli(['accounts', 'move', 'personal', 'first']);
    assert.equal(moved.code, 0, moved.stderr);
    assert.match(moved.stdout, /order: 1\. personal {2}2\. work/);
    await within2s('personal first', (x) => labels(x).join() === 'personal,work');

    assert.equal((await cli(['accounts', 'primary', 'work'])).code, 0);
    s = await within2s('work primary', (x) => x.policy.primaryAccount === 'work');
    assert.equal(s.config.sources['primary-account'], path.join(stateDir, 'accounts.json'));
    assert.ok(account(s, 'work').primary);
    assert.match((await cli(['accounts', 'list'])).stdout, /^work\toauth primary\tcredentials stored$/m, 'the list marks the primary');

    const renamed = await cli(['accounts', 'rename', 'personal', 'home']);
    assert.equal(renamed.code, 0, renamed.stderr);
    await within2s('personal renamed home', (x) => labels(x).join() === 'home,work');
    assert.deepEqual(credentialLabels().sort(), ['home', 'work'], 'the credentials moved with the name');

    assert.equal((await cli(['accounts', 'logout', 'work'])).code, 0);
    s = await within2s('work needs sign-in', (x) => account(x, 'work').needsSignIn);
    assert.equal(account(s, 'work').status, 'Needs sign-in');
    assert.deepEqual(credentialLabels(), ['home']);

    await add('third');
    await within2s('third added', (x) => labels(x).includes('third'));
    assert.equal((await cli(['accounts', 'remove', 'third'])).code, 0);
    await within2s('third removed', (x) => !labels(x).includes('third'));

    assert.equal((await cli(['accounts', 'primary', '--clear'])).code, 0);
    await within2s('no primary', (x) => x.policy.primaryAccount === undefined);

    const text = await cli(['status']);
    assert.match(text.stdout, /SOURCE/);
    await proxy.stop();
    assert.match(proxy.stderr(), /accounts: disabled "personal"/, 'the proxy logs what changed');
    assert.match(proxy.stderr(), /accounts: added "home"; removed "personal"/);
    assert.doesNotMatch(proxy.stderr(), /sk-ant-/);
  });

  it('a broken accounts.json keeps the last good account set and says why; a fixed one applies', async () => {
    await add('work');
    await add('personal');
    await startProxy();
    const file = path.join(stateDir, 'accounts.json');
    const good = readFileSync(file, 'utf8');
    writeFileSync(file, '{"version": 1, "accounts": [{"label": "work", "kind": "oau');
    let s = await within2s('the reload error shows', (x) => (x.config.lastReloadError ?? '').includes('accounts.json'));
    assert.deepEqual(labels(s), ['work', 'personal'], 'the last good accounts stay');
    assert.ok(s.accounts.every((a) => a.enabled));
    const refused = await cli(['accounts', 'disable', 'work']);
    assert.equal(refused.code, 1, 'the command cannot read the file either');
    assert.match(refused.stderr, /accounts\.json is not valid JSON/);
    writeFileSync(file, good.replace('"label": "personal"', '"label": "home"'));
    s = await within2s('the fixed file applies', (x) => labels(x).includes('home'));
    assert.equal(s.config.lastReloadError, null);
  });

  describe('a value the config file sets wins', () => {
    let config: string;
    beforeEach(() => {
      config = path.join(dir, 'proxy-config.yaml');
      writeFileSync(
        config,
        proxyConfigYaml({
          port: 0,
          baseUrl: sim.url,
          tokenUrl: sim.tokenUrl,
          stateDir,
          clientKey: `clr-edits-${id}-0123456789abcdef`,
          accounts: spec.slice(0, 2),
          extra: 'routing:\n  primary-account: "work"\n',
        }).replace('    refresh-token: "sk-ant-ort01-edits-work', '    enabled: true\n    refresh-token: "sk-ant-ort01-edits-work'),
      );
    });

    it('refuses to change it (exit 2, naming the file), writes nothing; changes what it does not set', async () => {
      for (const [args, message] of [
        [['accounts', 'disable', 'work'], `${config} sets enabled: true for "work", which wins over the state directory; change it there`],
        [['accounts', 'primary', 'personal'], `${config} sets routing.primary-account ("work"), which wins over the state directory; change it there`],
        [['accounts', 'rename', 'work', 'job'], `"work" is defined in ${config}; rename it there`],
        [['accounts', 'logout', 'work'], `the tokens of "work" are in ${config} and would be stored again at its next reload; remove them there`],
      ] as const) {
        const r = await cli([...args, '--config', config]);
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.equal(r.stderr, `claude-router: ${message}\n`);
      }
      assert.ok(!existsSync(path.join(stateDir, 'accounts.json')), 'nothing written');

      const proc = spawnCli(['start', '--config', config], { env });
      cleanups.push(() => proc.stop());
      await waitForStdout(proc, /^listening on /m);
      const keyEnv = ['--config', config];
      assert.equal((await cli(['accounts', 'disable', 'personal', '--config', config])).code, 0, 'personal sets no enabled');
      const s = await within2s('personal disabled', (x) => !account(x, 'personal').enabled, keyEnv);
      assert.deepEqual(account(s, 'personal').origin, { account: 'config', enabled: 'state-dir', position: 'config' });
      assert.deepEqual(account(s, 'work').origin, { account: 'config', enabled: 'config', position: 'config' });
      assert.equal(s.config.sources['primary-account'], config);
      const text = await cli(['status', '--config', config]);
      assert.match(text.stdout, /^personal +disabled +Disabled +config; enabled: state-dir +/m);
      assert.match(text.stdout, /primary work \(.*proxy-config\.yaml\)/);
    });
  });

  it('bad input: exit 2 with the reason, accounts.json unchanged', async () => {
    await add('work');
    await add('personal');
    const file = path.join(stateDir, 'accounts.json');
    const before = readFileSync(file, 'utf8');
    for (const [args, message] of [
      [['accounts', 'disable', 'nobody'], 'no account "nobody"; `claude-router accounts list` shows them'],
      [['accounts', 'remove', 'nobody'], 'no account "nobody"; `claude-router accounts list` shows them'],
      [['accounts', 'move', 'work', '9'], 'position: expected up, down, first, last or 1–2, got "9"'],
      [['accounts', 'rename', 'work', 'personal'], 'an account "personal" exists already'],
      [['accounts', 'rename', 'work', '__proto__'], 'the new name: 1–64 characters, no control characters, not a reserved name'],
      [['accounts', 'primary'], 'accounts primary <label>, or --clear'],
    ] as const) {
      const r = await cli([...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr, `claude-router: ${message}\n`);
    }
    const missing = await cli(['accounts', 'rename', 'work']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /missing required argument 'new-label'/);
    assert.equal(readFileSync(file, 'utf8'), before);
  });
});
