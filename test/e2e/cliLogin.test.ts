/**
 * `claude-router accounts login` through the BUILT CLI against the fake upstream's OAuth token
 * endpoint: the URL printed and handed to the browser, the pasted `code#state` exchanged, the pair
 * stored and served; a bad paste, a refused code or a bad label stores nothing.
 */
import { strict as assert } from 'node:assert';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { startFakeUpstream, type FakeUpstream } from '../../src/sim';
import { runCli, spawnCli, waitForStdout, type CliProcess } from '../support/routerCli';

const URL_LINE = /^ {2}(https:\/\/claude\.ai\/oauth\/authorize\?\S+)$/m;

describe('e2e: claude-router accounts login', function () {
  this.timeout(60_000);

  let dir: string;
  let stateDir: string;
  let env: Record<string, string>;
  let sim: FakeUpstream;
  const cleanups: (() => Promise<void> | void)[] = [];
  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-login-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(path.join(dir, 'xdg'));
    stateDir = path.join(dir, 'xdg', 'claude-router');
    // A "browser" that writes down the URL it was asked to open.
    const browser = path.join(dir, 'browser.sh');
    writeFileSync(browser, `#!/bin/sh\nprintf '%s' "$1" > '${path.join(dir, 'opened-url')}'\n`);
    chmodSync(browser, 0o755);
    env = { XDG_CONFIG_HOME: path.join(dir, 'xdg'), BROWSER: browser };
    sim = await startFakeUpstream({ accounts: [{ label: 'me', accessToken: 'sk-ant-oat01-login-old', refreshToken: 'sk-ant-ort01-login-old' }] });
    cleanups.push(() => sim.close());
  });
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  /** Starts `accounts login`, waits for the URL it prints; returns the process, the URL and its state. */
  async function startLogin(extra: string[]): Promise<{ proc: CliProcess; url: URL }> {
    const proc = spawnCli(['accounts', 'login', '--token-url', sim.tokenUrl, ...extra], { env, input: null });
    cleanups.push(() => proc.stop());
    const m = await waitForStdout(proc, URL_LINE);
    return { proc, url: new URL(m[1]) };
  }

  const credentials = () =>
    JSON.parse(readFileSync(path.join(stateDir, 'credentials.json'), 'utf8')) as { accounts: Record<string, { accessToken: string; grantedAtMs?: number }> };

  it('prints the URL, opens the browser on it, exchanges the pasted code#state and stores the pair; a proxy then serves with it', async () => {
    const before = Date.now();
    const { proc, url } = await startLogin(['--label', 'work']);
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    const state = url.searchParams.get('state')!;
    assert.ok(state.length >= 32, 'a random state');
    const opened = path.join(dir, 'opened-url');
    for (let i = 0; i < 100 && !existsSync(opened); i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(readFileSync(opened, 'utf8'), url.toString(), 'the browser was asked to open the printed URL');

    proc.child.stdin!.end(`sim-code-me#${state}\n`);
    assert.equal(await proc.exited, 0, proc.stderr());
    assert.match(proc.stdout(), /^signed in; added account "work"$/m);
    assert.doesNotMatch(proc.stdout() + proc.stderr(), /sk-ant-/, 'no token printed');
    assert.equal(credentials().accounts.work.accessToken, sim.account('me').accessToken, 'the pair the token endpoint issued is stored');
    const grantedAtMs = credentials().accounts.work.grantedAtMs!;
    assert.ok(grantedAtMs >= before && grantedAtMs <= Date.now(), 'the sign-in records its grant time');

    const listed = await runCli(['accounts', 'list', '--json'], 10_000, { env });
    assert.deepEqual((JSON.parse(listed.stdout) as { accounts: unknown[] }).accounts, [
      { label: 'work', kind: 'oauth', enabled: true, fallback: false, source: 'state-dir', credentialsStored: true, primary: false },
    ]);

    const router = spawnCli(['start', '--port', '0', '--upstream-url', sim.url, '--token-url', sim.tokenUrl], { env });
    cleanups.push(() => router.stop());
    const proxyUrl = (await waitForStdout(router, /^listening on (http:\/\/127\.0\.0\.1:\d+)$/m))[1];
    const key = readFileSync(path.join(stateDir, 'client-key'), 'utf8').trim();
    const res = await request(`${proxyUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: 'claude-sonnet-4-5-20250929', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await res.body.text();
    assert.equal(res.statusCode, 200, text);
    assert.equal(res.headers['x-claude-router-account'], 'work');
    const st = await runCli(['status', '--json'], 10_000, { env });
    assert.equal(st.code, 0, st.stderr);
    const grant = (JSON.parse(st.stdout) as { accounts: { grant: unknown }[] }).accounts[0].grant;
    assert.deepEqual(grant, { grantedAt: new Date(grantedAtMs).toISOString(), ageDays: 0, warn: false });
    assert.match((await runCli(['status'], 10_000, { env })).stdout, /SIGNED IN[\s\S]*\btoday\b/);
  });

  it('signing in again to an existing label replaces only its credentials', async () => {
    const added = await runCli(['accounts', 'add', '--label', 'work', '--fallback'], 10_000, { env, input: 'sk-ant-oat01-login-stale\nsk-ant-ort01-login-stale\n' });
    assert.equal(added.code, 0, added.stderr);
    assert.equal(credentials().accounts.work.grantedAtMs, undefined, 'a pasted token: grant time unknown');
    const { proc, url } = await startLogin(['--label', 'work', '--no-browser']);
    assert.match(proc.stdout(), /^Open this URL in a browser and sign in:$/m);
    proc.child.stdin!.end(`sim-code-me#${url.searchParams.get('state')}\n`);
    assert.equal(await proc.exited, 0, proc.stderr());
    assert.match(proc.stdout(), /^signed in again to "work"$/m);
    assert.equal(credentials().accounts.work.accessToken, sim.account('me').accessToken);
    assert.equal(typeof credentials().accounts.work.grantedAtMs, 'number', 'signing in again is a new grant');
    const listed = JSON.parse((await runCli(['accounts', 'list', '--json'], 10_000, { env })).stdout) as { accounts: { fallback: boolean }[] };
    assert.equal(listed.accounts.length, 1);
    assert.equal(listed.accounts[0].fallback, true, 'its settings stay');
    assert.ok(!existsSync(path.join(dir, 'opened-url')), '--no-browser opens nothing');
  });

  it('signing in to an API-key account added by command makes it an OAuth account', async () => {
    const added = await runCli(['accounts', 'add', '--label', 'payg', '--api-key', '-'], 10_000, { env, input: 'sk-ant-api03-login-payg\n' });
    assert.equal(added.code, 0, added.stderr);
    const { proc, url } = await startLogin(['--label', 'payg', '--no-browser']);
    proc.child.stdin!.end(`sim-code-me#${url.searchParams.get('state')}\n`);
    assert.equal(await proc.exited, 0, proc.stderr());
    const listed = JSON.parse((await runCli(['accounts', 'list', '--json'], 10_000, { env })).stdout) as { accounts: { label: string; kind: string }[] };
    assert.deepEqual(
      listed.accounts.map((a) => [a.label, a.kind]),
      [['payg', 'oauth']],
    );
  });

  describe('bad input stores nothing', () => {
    let before: string;
    beforeEach(async () => {
      const added = await runCli(['accounts', 'add', '--label', 'work'], 10_000, { env, input: 'sk-ant-oat01-login-keep\nsk-ant-ort01-login-keep\n' });
      assert.equal(added.code, 0, added.stderr);
      before = readFileSync(path.join(stateDir, 'credentials.json'), 'utf8');
    });
    const unchanged = () => assert.equal(readFileSync(path.join(stateDir, 'credentials.json'), 'utf8'), before, 'the credential store is unchanged');

    it('a code of another sign-in attempt: exit 1, named as such', async () => {
      const { proc } = await startLogin(['--label', 'work']);
      proc.child.stdin!.end('sim-code-me#not-this-attempt\n');
      assert.equal(await proc.exited, 1);
      assert.match(proc.stderr(), /this code belongs to another sign-in attempt; start again; nothing was stored/);
      unchanged();
    });

    it('a code without its #state: exit 1, saying to paste the whole code', async () => {
      const { proc } = await startLogin(['--label', 'work']);
      proc.child.stdin!.end('sim-code-me\n');
      assert.equal(await proc.exited, 1);
      assert.match(proc.stderr(), /the code is incomplete: paste the whole code shown after signing in, including the part after "#"; nothing was stored/);
      unchanged();
    });

    it('a code the token endpoint refuses: exit 1, "sign-in failed: invalid_grant"', async () => {
      const { proc, url } = await startLogin(['--label', 'work']);
      proc.child.stdin!.end(`no-such-code#${url.searchParams.get('state')}\n`);
      assert.equal(await proc.exited, 1);
      assert.match(proc.stderr(), /sign-in failed: invalid_grant; nothing was stored/);
      assert.doesNotMatch(proc.stderr(), /sk-ant-/);
      unchanged();
    });

    it('nothing pasted (standard input ends): exit 1', async () => {
      const { proc } = await startLogin(['--label', 'other']);
      proc.child.stdin!.end();
      assert.equal(await proc.exited, 1);
      assert.match(proc.stderr(), /nothing pasted; nothing was stored/);
      unchanged();
    });

    it('an account whose tokens the config file holds: exit 2 (they would replace the sign-in at the next reload)', async () => {
      const config = path.join(dir, 'proxy-config.yaml');
      writeFileSync(config, `state-dir: ${JSON.stringify(stateDir)}\naccounts:\n  - label: yaml\n    access-token: sk-ant-oat01-login-yaml\n`);
      const r = await runCli(['accounts', 'login', '--label', 'yaml', '--config', config, '--token-url', sim.tokenUrl], 10_000, { env });
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr, `claude-router: the tokens of "yaml" are in ${config} and would replace a sign-in at its next reload; remove them there first\n`);
      assert.doesNotMatch(r.stdout, /oauth\/authorize/);
      unchanged();
    });

    it('an invalid label: exit 2 before any URL is printed', async () => {
      const r = await runCli(['accounts', 'login', '--label', '__proto__', '--token-url', sim.tokenUrl], 10_000, { env });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /--label: 1–64 characters/);
      assert.doesNotMatch(r.stdout, /oauth\/authorize/);
      unchanged();
    });
  });
});
