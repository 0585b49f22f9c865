/**
 * End to end: `claude-router env` prints what a terminal needs to reach the running proxy. A real
 * POSIX shell evals its output and runs the REAL Claude Code CLI (`claude -p`) with it, through
 * the BUILT router CLI to the fake upstream; the key stays in its file, never in the output.
 *
 * Needs `npm run build` and the Claude Code binary from scripts/install-claude-code.sh; never skipped.
 */
import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startFakeUpstream, type FakeUpstream, type SimAccountSpec } from '../../src/sim';
import { CLAUDE_CODE_OFFLINE_ENV, claudeCodeBinary } from '../support/claudeCode';
import { withLoopback } from '../../src/proxy/http/clientEnv';
import { CLI_JS, proxyConfigYaml, runCli, startRouterCli, type CliProcess } from '../support/routerCli';

describe('e2e: claude-router env → a shell → real Claude Code', function () {
  this.timeout(90_000);

  const runId = randomBytes(4).toString('hex');
  const spec: SimAccountSpec[] = [{ label: 'alpha', accessToken: `sk-ant-oat01-env-alpha-${runId}`, refreshToken: `sk-ant-ort01-env-alpha-${runId}` }];
  let sim: FakeUpstream;
  let dir: string;
  let stateDir: string;
  let configFile: string;
  let router: CliProcess | undefined;
  let url: string;

  before(async () => {
    claudeCodeBinary(); // fail fast, naming the install script, when Claude Code is missing
    sim = await startFakeUpstream({ accounts: spec });
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-e2e-env-'));
    stateDir = path.join(dir, 'state');
    configFile = path.join(dir, 'proxy-config.yaml');
    // No `client-key` in the file: the router keeps its key in <state-dir>/client-key.
    const yaml = proxyConfigYaml({ port: 0, baseUrl: sim.url, tokenUrl: sim.tokenUrl, stateDir, clientKey: 'unused-placeholder-key', accounts: spec });
    writeFileSync(configFile, yaml.replace(/^client-key: .*\n/m, ''));
    const started = await startRouterCli(configFile);
    router = started.proc;
    url = started.url;
  });

  after(async () => {
    await router?.stop();
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('prints the VS Code terminal variables with the key read from its file, never the key itself', async () => {
    const key = readFileSync(path.join(stateDir, 'client-key'), 'utf8').trim();
    const posix = await runCli(['env', '--config', configFile]);
    assert.equal(posix.code, 0, posix.stderr);
    assert.ok(!posix.stdout.includes(key) && !posix.stderr.includes(key), 'the key is not printed');
    assert.equal(
      posix.stdout,
      [
        `export ANTHROPIC_BASE_URL='${url}'`,
        `export CLAUDE_CODE_OAUTH_TOKEN="$(cat '${path.join(stateDir, 'client-key')}')"`,
        "export CLAUDE_CODE_SUBSCRIPTION_TYPE='max'",
        "export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC='1'",
        "export CLAUDE_CODE_GATEWAY_HINT_HEADERS='1'",
        `export NO_PROXY='${withLoopback(process.env.NO_PROXY ?? process.env.no_proxy)}'`,
        `export no_proxy='${withLoopback(process.env.NO_PROXY ?? process.env.no_proxy)}'`,
        '',
      ].join('\n'),
    );
    const ps = await runCli(['env', '--config', configFile, '--shell', 'powershell', '--subscription-type', 'pro']);
    assert.equal(ps.code, 0, ps.stderr);
    assert.match(ps.stdout, /^\$env:CLAUDE_CODE_OAUTH_TOKEN = \(Get-Content -LiteralPath '.*client-key' -TotalCount 1\)$/m);
    assert.match(ps.stdout, /^\$env:CLAUDE_CODE_SUBSCRIPTION_TYPE = 'pro'$/m);
    const bad = await runCli(['env', '--config', configFile, '--shell', 'fish']);
    assert.equal(bad.code, 2, 'an unknown shell is a usage error');
    assert.match(bad.stderr, /posix, powershell, cmd/);
  });

  for (const [what, proxyEnv] of [
    ['', {}],
    [
      ' — also when the terminal has a proxy of its own that cannot reach the router',
      { HTTPS_PROXY: 'http://127.0.0.1:9', HTTP_PROXY: 'http://127.0.0.1:9', https_proxy: 'http://127.0.0.1:9', http_proxy: 'http://127.0.0.1:9', NO_PROXY: 'intranet.example' },
    ],
  ] as const)
    it(`a POSIX shell that evals its output runs claude -p through the proxy and gets the answer${what}`, async () => {
      const home = mkdtempSync(path.join(dir, 'home-'));
      mkdirSync(path.join(home, 'work'));
      const script = `eval "$("$NODE" "$CLI" env --config "$CONFIG")" && exec "$CLAUDE" -p 'say hi' </dev/null`;
      // A clean environment: nothing of the router's reaches Claude Code but what `env` printed.
      const shellEnv = {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: home,
        ...CLAUDE_CODE_OFFLINE_ENV,
        NODE: process.execPath,
        CLI: CLI_JS,
        CONFIG: configFile,
        CLAUDE: claudeCodeBinary(),
        ...proxyEnv,
      };
      const before = sim.requests.length;
      const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile('/bin/sh', ['-c', script], { cwd: path.join(home, 'work'), env: shellEnv, timeout: 60_000 }, (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}\n--- router ---\n${router?.stderr()}`);
      assert.equal(run.stdout.trim(), 'Hello from alpha.');
      const upstream = sim.requests.slice(before).filter((q) => q.path.startsWith('/v1/messages'));
      assert.ok(upstream.length > 0 && upstream.every((q) => q.account === 'alpha'), 'the request went through the proxy to the pool account');
    });
});
