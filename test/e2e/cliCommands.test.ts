/**
 * The BUILT router CLI (`node dist/cli.js`, from `npm run build`) as a new user meets it: help
 * for each command, `--version`, suggestions for typos, `start` without a config file serving
 * the accounts added by command, `accounts list --json`, config errors in words.
 */
import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { startFakeUpstream, type SimAccountSpec } from '../../src/sim';
import { runCli, spawnCli, waitForStdout } from '../support/routerCli';

const PACKAGE_JSON = path.resolve(__dirname, '..', '..', '..', 'package.json');

describe('e2e: claude-router command line', function () {
  this.timeout(60_000);

  let dir: string;
  const cleanups: (() => Promise<void> | void)[] = [];
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-cmds-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  });
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  describe('help, version and typos', () => {
    const commands = [
      ['start'],
      ['status'],
      ['demo'],
      ['accounts'],
      ['accounts', 'list'],
      ['accounts', 'add'],
      ['accounts', 'import'],
      ['accounts', 'remove'],
      ['accounts', 'login'],
      ['accounts', 'rename'],
      ['accounts', 'enable'],
      ['accounts', 'disable'],
      ['accounts', 'move'],
      ['accounts', 'primary'],
      ['accounts', 'logout'],
      ['decisions'],
      ['explain'],
      ['estimation'],
      ['completion'],
      ['rotate-key'],
      ['report'],
      ['replay'],
    ];
    it('`<command> --help` prints that command’s own usage, description and example, exit 0', async () => {
      const seen = new Set<string>();
      for (const cmd of commands) {
        const r = await runCli([...cmd, '--help']);
        const name = cmd.join(' ');
        assert.equal(r.code, 0, `${name}: ${r.stderr}`);
        assert.match(r.stdout, new RegExp(`^Usage: claude-router ${name} `), `${name}:\n${r.stdout}`);
        assert.match(r.stdout, new RegExp(`^Examples?:\\n  \\$ .*claude-router ${name}\\b`, 'm'), `${name} shows an example:\n${r.stdout}`);
        assert.ok(!seen.has(r.stdout), `${name} has its own help`);
        seen.add(r.stdout);
      }
    });

    it('`-h` works like `--help`, and `help <command>` too', async () => {
      const long = await runCli(['accounts', 'add', '--help']);
      const short = await runCli(['accounts', 'add', '-h']);
      assert.equal(short.code, 0);
      assert.equal(short.stdout, long.stdout);
      const viaHelp = await runCli(['help', 'status']);
      assert.equal(viaHelp.code, 0);
      assert.match(viaHelp.stdout, /^Usage: claude-router status /);
    });

    it('`--version` prints the package version, exit 0', async () => {
      const { version } = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string };
      for (const flag of ['--version', '-V']) {
        const r = await runCli([flag]);
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout.trim(), version);
      }
    });

    it('a mistyped command or option: exit 2 with a suggestion', async () => {
      const typo = await runCli(['stauts']);
      assert.equal(typo.code, 2);
      assert.match(typo.stderr, /unknown command 'stauts'/);
      assert.match(typo.stderr, /did you mean status\?/i);
      const sub = await runCli(['accounts', 'lst']);
      assert.equal(sub.code, 2);
      assert.match(sub.stderr, /did you mean list\?/i);
      const option = await runCli(['status', '--jsno']);
      assert.equal(option.code, 2);
      assert.match(option.stderr, /unknown option '--jsno'/);
      assert.match(option.stderr, /did you mean --json\?/i);
    });

    it('no command: the overview on stderr, exit 2', async () => {
      const r = await runCli([]);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /^Usage: claude-router /);
      for (const c of ['start', 'status', 'demo', 'accounts', 'rotate-key', 'report', 'replay']) assert.match(r.stderr, new RegExp(`^  ${c}\\b`, 'm'));
    });

    it('`help` takes a command and its subcommand; an unknown name is an error naming the commands there', async () => {
      const login = await runCli(['help', 'accounts', 'login']);
      assert.equal(login.code, 0, login.stderr);
      assert.match(login.stdout, /^Usage: claude-router accounts login /);
      assert.match(login.stdout, /\$ claude-router accounts login --label work/, 'with its examples');
      for (const [args, message] of [
        [['help', 'nope'], /^claude-router: no command "nope"; the commands: start, status, /],
        [['help', 'accounts', 'nope'], /^claude-router: no command "accounts nope"; the commands of accounts: login, list, add, /],
      ] as const) {
        const r = await runCli([...args]);
        assert.equal(r.code, 2);
        assert.match(r.stderr, message);
        assert.doesNotMatch(r.stderr, /^Usage:/m, 'not the whole help instead');
      }
    });
  });

  describe('config errors in words', () => {
    it('a missing config file: "config file not found: <file>", exit 2', async () => {
      const missing = path.join(dir, 'missing.yaml');
      const r = await runCli(['start', '--config', missing]);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr, `claude-router: config file not found: ${missing}\n`);
      assert.doesNotMatch(r.stderr, /ENOENT/);
      const s = await runCli(['status', '--config', missing]);
      assert.equal(s.code, 2, s.stderr);
      assert.match(s.stderr, /config file not found: /);
    });

    it('a directory given as the config file: named as such, exit 2', async () => {
      const r = await runCli(['start', '--config', dir]);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr, `claude-router: config file ${dir} is a directory, not a file\n`);
    });

    it('report and replay of a file with no decision record, or no file: named, exit 2 (not an all-zero report)', async () => {
      const empty = path.join(dir, 'empty.jsonl');
      const garbage = path.join(dir, 'garbage.jsonl');
      writeFileSync(empty, '');
      writeFileSync(garbage, 'not json\n{"a":1}\n');
      for (const [args, message] of [
        [['report', empty], `no decision records in ${empty} (empty)`],
        [['replay', garbage], `no decision records in ${garbage} (2 line(s) that are not decision records)`],
        [['report', path.join(dir, 'missing.jsonl')], `cannot read ${path.join(dir, 'missing.jsonl')}: no such file`],
      ] as const) {
        const r = await runCli([...args]);
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
        assert.equal(r.stderr, `claude-router: ${message}\n`);
        assert.equal(r.stdout, '');
      }
    });

    it('a --url that is no http URL: named, exit 2, before anything is asked', async () => {
      for (const cmd of ['status', 'decisions', 'explain']) {
        const r = await runCli([cmd, '--url', 'notaurl']);
        assert.equal(r.code, 2, `${cmd}: ${r.stderr}`);
        assert.equal(r.stderr, 'claude-router: --url: expected the proxy\'s http:// URL (e.g. http://127.0.0.1:48290), got "notaurl"\n');
      }
    });
  });

  describe('accounts in the state directory', () => {
    const id = randomBytes(4).toString('hex');
    const spec: SimAccountSpec[] = ['work', 'personal'].map((label) => ({
      label,
      accessToken: `sk-ant-oat01-cmds-${label}-${id}`,
      refreshToken: `sk-ant-ort01-cmds-${label}-${id}`,
    }));
    /** A scratch XDG_CONFIG_HOME: the state directory is `<it>/claude-router`. */
    let env: Record<string, string>;
    let stateDir: string;
    beforeEach(() => {
      const xdg = path.join(dir, 'xdg');
      mkdirSync(xdg);
      env = { XDG_CONFIG_HOME: xdg };
      stateDir = path.join(xdg, 'claude-router');
    });

    async function addAccounts(): Promise<void> {
      for (const a of spec) {
        const r = await runCli(['accounts', 'add', '--label', a.label], 10_000, { env, input: `${a.accessToken}\n${a.refreshToken}\n` });
        assert.equal(r.code, 0, r.stderr);
      }
      const key = await runCli(['accounts', 'add', '--label', 'payg', '--api-key', '-', '--fallback'], 10_000, { env, input: `sk-ant-api03-cmds-${id}\n` });
      assert.equal(key.code, 0, key.stderr);
    }

    it('`accounts list --json`: label, kind, enabled, fallback and source of each account, never a token', async () => {
      await addAccounts();
      const r = await runCli(['accounts', 'list', '--json'], 10_000, { env });
      assert.equal(r.code, 0, r.stderr);
      const listed = JSON.parse(r.stdout) as { stateDir: string; accounts: unknown[] };
      assert.equal(listed.stateDir, stateDir);
      assert.deepEqual(listed.accounts, [
        { label: 'work', kind: 'oauth', enabled: true, fallback: false, source: 'state-dir', credentialsStored: true, primary: false },
        { label: 'personal', kind: 'oauth', enabled: true, fallback: false, source: 'state-dir', credentialsStored: true, primary: false },
        { label: 'payg', kind: 'api_key', enabled: true, fallback: true, source: 'state-dir', credentialsStored: true, primary: false },
      ]);
      assert.doesNotMatch(r.stdout, /sk-ant-/);
    });

    it('`start` without --config and without accounts: exit 2, naming the state directory and the way to add one', async () => {
      const r = await runCli(['start', '--port', '0'], 10_000, { env });
      assert.equal(r.code, 2, r.stderr);
      assert.ok(r.stderr.includes(`no accounts in ${stateDir}`), r.stderr);
      assert.match(r.stderr, /accounts add/);
      assert.doesNotMatch(r.stdout, /listening on/);
    });

    it('a second `start` on the same state directory, or on a taken port, is refused in words and leaves the first proxy registered', async () => {
      const sim = await startFakeUpstream({ accounts: spec });
      cleanups.push(() => sim.close());
      await addAccounts();
      const first = spawnCli(['start', '--port', '0', '--upstream-url', sim.url, '--token-url', sim.tokenUrl], { env });
      cleanups.push(() => first.stop());
      const url = (await waitForStdout(first, /^listening on (http:\/\/127\.0\.0\.1:\d+)$/m))[1];

      const same = await runCli(['start', '--port', '0', '--upstream-url', sim.url, '--token-url', sim.tokenUrl], 10_000, { env });
      assert.equal(same.code, 1, same.stderr);
      assert.ok(same.stderr.includes(`a proxy already runs from ${stateDir} (pid ${first.child.pid}, ${url}): stop it first`), same.stderr);
      assert.equal((JSON.parse(readFileSync(path.join(stateDir, 'proxy.json'), 'utf8')) as { pid: number }).pid, first.child.pid, 'still the first one registered');

      const port = new URL(url).port;
      const other = ['--state-dir', path.join(dir, 'other')];
      assert.equal((await runCli([...other, 'accounts', 'add', '--label', 'work'], 10_000, { env, input: `${spec[0].accessToken}\n` })).code, 0);
      const taken = await runCli([...other, 'start', '--port', port, '--upstream-url', sim.url, '--token-url', sim.tokenUrl], 10_000, { env });
      assert.equal(taken.code, 1, taken.stderr);
      assert.ok(taken.stderr.includes(`port ${port} on 127.0.0.1 is taken by another program (EADDRINUSE; another proxy?): stop it, or choose another port`), taken.stderr);
    });

    it('`start` without --config serves the accounts added by command; `status` finds it with no flags', async () => {
      const sim = await startFakeUpstream({ accounts: spec });
      cleanups.push(() => sim.close());
      await addAccounts();

      const proc = spawnCli(['start', '--port', '0', '--upstream-url', sim.url, '--token-url', sim.tokenUrl], { env });
      cleanups.push(() => proc.stop());
      const m = await waitForStdout(proc, /^listening on (http:\/\/127\.0\.0\.1:\d+)$/m);
      const url = m[1];
      const key = readFileSync(path.join(stateDir, 'client-key'), 'utf8').trim();

      const res = await request(`${url}/v1/messages?beta=true`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', authorization: `Bearer ${key}`, 'x-claude-code-session-id': 'cmds-session' },
        body: JSON.stringify({ model: 'claude-sonnet-4-5-20250929', max_tokens: 64, messages: [{ role: 'user', content: 'say hi' }] }),
      });
      const text = await res.body.text();
      assert.equal(res.statusCode, 200, text);
      assert.match(text, /Hello from (work|personal)\./, 'answered by one of the accounts added by command');

      const status = await runCli(['status', '--json'], 10_000, { env });
      assert.equal(status.code, 0, status.stderr);
      const report = JSON.parse(status.stdout) as { accounts: { label: string; usable: boolean }[] };
      assert.deepEqual(
        report.accounts.map((a) => a.label),
        ['work', 'personal', 'payg'],
      );
      assert.ok(
        report.accounts.filter((a) => a.label !== 'payg').every((a) => a.usable),
        status.stdout,
      );

      await proc.stop();
      assert.equal(await proc.exited, 0, proc.stderr());
    });
  });
});
