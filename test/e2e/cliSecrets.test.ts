/**
 * The built CLI takes secrets off the command line: `accounts add` reads them from standard
 * input, a 0600 file or an environment variable, and the CLI warns when a secret is given as a flag value.
 */
import { strict as assert } from 'node:assert';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../support/routerCli';

describe('e2e: secrets stay off the command line', function () {
  this.timeout(30_000);
  let dir: string;
  let config: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-secrets-'));
    config = path.join(dir, 'proxy-config.yaml');
    writeFileSync(config, `state-dir: ${JSON.stringify(path.join(dir, 'state'))}\n`);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** The stored credentials of `label`. */
  const stored = (label: string) =>
    (JSON.parse(readFileSync(path.join(dir, 'state', 'credentials.json'), 'utf8')) as { accounts: Record<string, Record<string, unknown>> }).accounts[label];
  const add = (args: string[], opts: Parameters<typeof runCli>[2] = {}) => runCli(['accounts', 'add', '--config', config, ...args], 10_000, opts);

  it('accounts add stores the pair piped on standard input (access token, then refresh token), without a warning', async () => {
    const r = await add(['--label', 'work'], { input: 'sk-ant-oat01-piped-access\nsk-ant-ort01-piped-refresh\n' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /added account "work"/);
    assert.equal(r.stderr, '');
    assert.deepEqual({ ...stored('work') }, { accessToken: 'sk-ant-oat01-piped-access', refreshToken: 'sk-ant-ort01-piped-refresh' });
    const list = await runCli(['accounts', 'list', '--config', config]);
    assert.match(list.stdout, /^work\toauth\tcredentials stored$/m);
  });

  it('takes an API key from its environment variable, and a token from a 0600 file but not from a file others can read', async () => {
    const key = await add(['--label', 'payg', '--fallback'], { env: { CLAUDE_ROUTER_API_KEY: 'sk-ant-api03-from-env' } });
    assert.equal(key.code, 0, key.stderr);
    assert.equal(stored('payg').accessToken, 'sk-ant-api03-from-env');
    assert.match((await runCli(['accounts', 'list', '--config', config])).stdout, /^payg\tapi_key fallback\t/m);

    const file = path.join(dir, 'token');
    writeFileSync(file, 'sk-ant-oat01-from-file\n', { mode: 0o644 });
    chmodSync(file, 0o644);
    const open = await add(['--label', 'filed', '--access-token-file', file]);
    assert.equal(open.code, 2);
    assert.match(open.stderr, /--access-token-file .*token: other users can access it \(mode 644\); run chmod 600/);
    assert.ok(!open.stderr.includes('sk-ant-oat01-from-file'));
    chmodSync(file, 0o600);
    const ok = await add(['--label', 'filed', '--access-token-file', file, '--refresh-token', '-'], { input: 'sk-ant-ort01-piped\n' });
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual({ ...stored('filed') }, { accessToken: 'sk-ant-oat01-from-file', refreshToken: 'sk-ant-ort01-piped' });
  });

  it('still takes a token given as a flag value, with a warning that names the risk and the alternatives', async () => {
    // The one test that puts a secret on a command line: the old way must keep working.
    const r = await add(['--label', 'legacy', '--access-token', 'sk-ant-oat01-on-the-command-line']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /warning: the value of --access-token is visible to other local users .* shell history; pipe it on standard input/);
    assert.ok(!r.stderr.includes('sk-ant-oat01-on-the-command-line'), 'the warning does not repeat the secret');
    assert.equal(stored('legacy').accessToken, 'sk-ant-oat01-on-the-command-line');
  });

  it('status --key warns that the key is visible on the command line and names CLAUDE_ROUTER_KEY', async () => {
    const r = await runCli(['status', '--url', 'http://127.0.0.1:9', '--key', 'clr-a-key-on-the-command-line']);
    assert.match(r.stderr, /warning: the value of --key is visible to other local users .*; set CLAUDE_ROUTER_KEY instead/);
    assert.ok(!r.stderr.includes('clr-a-key-on-the-command-line'));
  });

  it('a piped API key is stored as an API-key fallback account, not as an OAuth token; --no-fallback routes to it normally', async () => {
    const r = await add(['--label', 'payg'], { input: 'sk-ant-api03-piped-key\n' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /added API-key account "payg" \(a fallback: used only when no other account can serve\)/);
    const plain = await add(['--label', 'payg2', '--no-fallback'], { input: 'sk-ant-api03-piped-key-2\n' });
    assert.equal(plain.code, 0, plain.stderr);
    const list = (await runCli(['accounts', 'list', '--config', config])).stdout;
    assert.match(list, /^payg\tapi_key fallback\tcredentials stored$/m);
    assert.match(list, /^payg2\tapi_key\tcredentials stored$/m);
  });

  it('refuses a secret whose prefix contradicts its option, or a refresh token where the access token goes, and stores nothing', async () => {
    const cases: [string[], Parameters<typeof runCli>[2], RegExp][] = [
      [['--label', 'a', '--api-key', '-'], { input: 'sk-ant-oat01-not-a-key\n' }, /--api-key: that is an OAuth token \(sk-ant-oat…\), not an API key/],
      [['--label', 'b'], { env: { CLAUDE_ROUTER_ACCESS_TOKEN: 'sk-ant-api03-not-a-token' } }, /--access-token \(CLAUDE_ROUTER_ACCESS_TOKEN\): that is an API key/],
      [['--label', 'c'], { input: 'sk-ant-ort01-refresh-first\n' }, /standard input: that is a refresh token/],
      [['--label', 'd'], { input: 'sk-ant-api03-a-key\nsk-ant-ort01-and-a-refresh\n' }, /an API key takes no refresh token/],
    ];
    for (const [args, opts, message] of cases) {
      const r = await add(args, opts);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /not-a-key|not-a-token|refresh-first|and-a-refresh/, 'the message does not repeat the secret');
    }
    assert.match((await runCli(['accounts', 'list', '--config', config])).stdout, /^no accounts$/m);
  });

  it('an existing label is refused unless --replace, which replaces the credentials and keeps the settings', async () => {
    assert.equal((await add(['--label', 'work', '--fallback'], { input: 'sk-ant-oat01-first\nsk-ant-ort01-first\n' })).code, 0);
    const again = await add(['--label', 'work'], { input: 'sk-ant-oat01-second\n' });
    assert.equal(again.code, 2);
    assert.match(again.stderr, /an account "work" exists; --replace replaces its credentials/);
    assert.deepEqual({ ...stored('work') }, { accessToken: 'sk-ant-oat01-first', refreshToken: 'sk-ant-ort01-first' }, 'nothing replaced');
    const replaced = await add(['--label', 'work', '--replace'], { input: 'sk-ant-oat01-second\nsk-ant-ort01-second\n' });
    assert.equal(replaced.code, 0, replaced.stderr);
    assert.match(replaced.stdout, /replaced the credentials of account "work"/);
    assert.deepEqual({ ...stored('work') }, { accessToken: 'sk-ant-oat01-second', refreshToken: 'sk-ant-ort01-second' });
    assert.match((await runCli(['accounts', 'list', '--config', config])).stdout, /^work\toauth fallback\tcredentials stored$/m, 'still a fallback');
  });

  it('with nothing piped and no option, says where a token may come from', async () => {
    const r = await add(['--label', 'empty'], { input: '' });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /standard input: no access token/);
  });
});
