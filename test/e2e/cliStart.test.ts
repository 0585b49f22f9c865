/**
 * The BUILT router CLI (`node dist/cli.js`, from `npm run build`) as a user runs it:
 * `start` refusing bad configs, `status` printing the pool, `demo` serving a plain client.
 * No Claude Code needed.
 */
import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { startFakeUpstream, type FakeUpstream, type SimAccountSpec } from '../../src/sim';
import { proxyConfigYaml, runCli, spawnCli, startRouterCli, waitForStdout, type CliProcess } from '../support/routerCli';

function streamBody(): string {
  return JSON.stringify({
    model: 'claude-sonnet-4-5-20250929',
    max_tokens: 64,
    stream: true,
    messages: [{ role: 'user', content: 'say hi' }],
  });
}

async function post(url: string, key: string, session: string) {
  const res = await request(`${url}/v1/messages?beta=true`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      authorization: `Bearer ${key}`,
      'x-claude-code-session-id': session,
    },
    body: streamBody(),
  });
  return { status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), text: await res.body.text() };
}

describe('e2e: claude-router CLI', function () {
  this.timeout(30_000);

  let dir: string;
  const cleanups: (() => Promise<void> | void)[] = [];
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-cli-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  });
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  function configFile(text: string): string {
    const file = path.join(dir, 'proxy-config.yaml');
    writeFileSync(file, text);
    return file;
  }

  describe('start refuses what it cannot run', () => {
    it('an out-of-range value: exit 2 at once, naming the key and the limit', async () => {
      const file = configFile(`state-dir: ${JSON.stringify(dir)}\nrouting:\n  spill-inflight: 500\n`);
      const r = await runCli(['start', '--config', file]);
      assert.equal(r.code, 2, `stderr: ${r.stderr}`);
      assert.ok(r.ms < 5_000, `took ${r.ms} ms`);
      assert.match(r.stderr, /routing\.spill-inflight\b/);
      assert.match(r.stderr, /too big.*100/i, r.stderr);
      assert.doesNotMatch(r.stdout, /listening on/);
    });

    it('an unknown key: exit 2 at once, naming the key as written', async () => {
      const file = configFile(`state-dir: ${JSON.stringify(dir)}\nrouting:\n  spill-inflite: 3\n`);
      const r = await runCli(['start', '--config', file]);
      assert.equal(r.code, 2, `stderr: ${r.stderr}`);
      assert.ok(r.ms < 5_000, `took ${r.ms} ms`);
      assert.match(r.stderr, /routing/);
      assert.match(r.stderr, /spill-inflite/);
      assert.match(r.stderr, /unknown key spill-inflite/);
      assert.doesNotMatch(r.stderr, /spillInflite/, 'the internal camelCase name is not shown');
      assert.doesNotMatch(r.stdout, /listening on/);
    });

    it('no --config: exit 2 with a usage message', async () => {
      // An empty state directory of its own: the default one may hold accounts, and then start would serve them.
      const home = mkdtempSync(path.join(os.tmpdir(), 'router-noconfig-'));
      const r = await runCli(['start'], 10_000, { env: { XDG_CONFIG_HOME: home } });
      rmSync(home, { recursive: true, force: true });
      assert.equal(r.code, 2, `stderr: ${r.stderr}`);
      assert.match(r.stderr, /--config/);
      assert.doesNotMatch(r.stdout, /listening on/);
    });
  });

  describe('status against a running proxy', () => {
    let sim: FakeUpstream;
    let proxy: CliProcess | undefined;
    const id = randomBytes(4).toString('hex');
    const spec: SimAccountSpec[] = ['work', 'personal'].map((label) => ({
      label,
      accessToken: `sk-ant-oat01-cli-${label}-${id}`,
      refreshToken: `sk-ant-ort01-cli-${label}-${id}`,
    }));
    const clientKey = `cli-test-key-${randomBytes(12).toString('hex')}`;

    beforeEach(async () => {
      sim = await startFakeUpstream({ accounts: spec });
      cleanups.push(() => sim.close());
    });

    it('prints a table with every account label and never a token', async () => {
      // port 0: `status --config` finds the proxy through the runtime file in the state directory.
      const file = configFile(proxyConfigYaml({ port: 0, baseUrl: sim.url, tokenUrl: sim.tokenUrl, stateDir: path.join(dir, 'state'), clientKey, accounts: spec }));
      const started = await startRouterCli(file);
      proxy = started.proc;
      cleanups.push(() => proxy!.stop());

      const served = await post(started.url, clientKey, 'status-session');
      assert.equal(served.status, 200, served.text);

      const r = await runCli(['status', '--config', file]);
      assert.equal(r.code, 0, `stderr: ${r.stderr}`);
      assert.match(r.stdout, /^ACCOUNT\s+STATE/m);
      for (const a of spec) assert.match(r.stdout, new RegExp(`^${a.label}\\s+usable\\b`, 'm'), r.stdout);
      const secrets = [clientKey, ...spec.flatMap((a) => [a.accessToken, a.refreshToken!]), ...spec.map((a) => sim.account(a.label).accessToken)];
      for (const s of secrets) assert.ok(!r.stdout.includes(s) && !r.stderr.includes(s), 'status output holds no token');
      assert.doesNotMatch(r.stdout, /sk-ant-/);
      assert.match(r.stdout, /served 1\b/, r.stdout);

      // Ctrl-C / SIGTERM stops the proxy cleanly.
      await proxy.stop();
      assert.equal(await proxy.exited, 0, proxy.stderr());
      const after = await runCli(['status', '--config', file]);
      assert.equal(after.code, 1, 'no proxy answers once it stopped');
    });
  });

  describe('demo', () => {
    it('prints `listening on` and the Claude Code environment, and answers a plain streamed POST with the printed key', async () => {
      const home = mkdtempSync(path.join(os.tmpdir(), 'router-demo-home-'));
      cleanups.push(() => rmSync(home, { recursive: true, force: true }));
      const demo = spawnCli(['demo', '--state-dir', home]);
      cleanups.push(() => demo.stop());
      const m = await waitForStdout(demo, /^listening on (http:\/\/127\.0\.0\.1:\d+)$/m);
      const url = m[1];
      const out = demo.stdout();
      const logged = out.match(/Decisions are logged to (\S+)decisions\.jsonl/);
      assert.ok(logged, out);
      const demoState = path.dirname(path.join(logged[1], 'decisions.jsonl'));
      assert.match(path.basename(demoState), /^claude-router-demo-/);
      cleanups.push(async () => {
        await demo.stop();
        rmSync(demoState, { recursive: true, force: true });
      });
      const env = Object.fromEntries([...out.matchAll(/^\s*export (\w+)='([^']*)'$/gm)].map((x) => [x[1], x[2]]));
      assert.equal(env.ANTHROPIC_BASE_URL, url, out);
      assert.equal(env.CLAUDE_CODE_SUBSCRIPTION_TYPE, 'max', out);
      assert.equal(env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, '1', out);
      assert.equal(env.CLAUDE_CODE_GATEWAY_HINT_HEADERS, '1', out);
      // The key is not printed (a pasted line with it would stay in the shell's history): the
      // printed lines read it from its file.
      const keyFile = out.match(/^\s*export CLAUDE_CODE_OAUTH_TOKEN="\$\(cat '([^']+)'\)"$/m);
      assert.ok(keyFile, out);
      assert.equal(keyFile[1], path.join(demoState, 'client-key'));
      const key = readFileSync(keyFile[1], 'utf8').trim();
      assert.ok(key.length >= 16, 'a key in the file');
      assert.ok(!out.includes(key), 'the demo prints no line holding the key');
      assert.match(out, /^Watch the pool: node dist\/cli\.js status /m, 'plain `status` finds the demo (test/e2e/cliDiscovery.test.ts)');
      assert.match(out, /eval "\$\(node dist\/cli\.js env\)"/, 'the demo points at `env` (test/e2e/cliEnv.test.ts)');

      const ok = await post(url, key, 'demo-session');
      assert.equal(ok.status, 200, ok.text);
      assert.match(ok.contentType, /text\/event-stream/);
      assert.match(ok.text, /^event: message_stop$/m);
      const text = [...ok.text.matchAll(/^data: (.*)$/gm)]
        .map((x) => JSON.parse(x[1]))
        .filter((e) => e.type === 'content_block_delta' && e.delta?.type === 'text_delta')
        .map((e) => e.delta.text)
        .join('');
      assert.match(text, /^Hello from (work|personal|team)\.$/, 'the answer of one simulated account');

      const denied = await post(url, `${key}-wrong`, 'demo-session');
      assert.equal(denied.status, 401, 'a wrong key is refused');

      await demo.stop();
      assert.equal(await demo.exited, 0, demo.stderr());
      // Stopped, it keeps its decisions for report/replay and says where.
      const decisions = path.join(demoState, 'decisions.jsonl');
      assert.ok(demo.stdout().includes(`Its decisions stay in ${decisions}`), demo.stdout());
      const report = await runCli(['report', decisions, '--json']);
      assert.equal(report.code, 0, report.stderr);
      assert.equal(JSON.parse(report.stdout).decisions, 1, `one decision for the one served request: ${report.stdout}`);
    });
  });
});
