/**
 * One discovery file: plain `status` (no flag, no key in the environment) finds the demo and a
 * `start`ed proxy through `<state-dir>/proxy.json`, which is 0600 and holds no key; `--state-dir`
 * selects another state directory; a demo does not displace a registered proxy.
 */
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startFakeUpstream } from '../../src/sim';
import type { StatusReport } from '../../src/proxy/status/status';
import { runCli, spawnCli, waitForStdout } from '../support/routerCli';

describe('e2e: finding the running proxy without flags', function () {
  this.timeout(60_000);

  let dir: string;
  let home: string;
  let env: Record<string, string>;
  const cleanups: (() => Promise<void> | void)[] = [];
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-discovery-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(path.join(dir, 'xdg'));
    home = path.join(dir, 'xdg', 'claude-router');
    // No CLAUDE_ROUTER_KEY from the test's own environment.
    env = { XDG_CONFIG_HOME: path.join(dir, 'xdg'), CLAUDE_ROUTER_KEY: '' };
  });
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  async function startDemo(args: string[] = []) {
    const demo = spawnCli(['demo', ...args], { env });
    cleanups.push(() => demo.stop());
    const url = (await waitForStdout(demo, /^listening on (http:\/\/127\.0\.0\.1:\d+)$/m))[1];
    const state = demo.stdout().match(/Decisions are logged to (\S+)\/decisions\.jsonl/)![1];
    cleanups.push(() => rmSync(state, { recursive: true, force: true }));
    return { demo, url, state };
  }

  it('plain `status` finds the demo; the discovery file is 0600, names the URL, pid and state directory, never the key; it goes with the demo', async () => {
    const { demo, url, state } = await startDemo();
    assert.match(demo.stdout(), /^Watch the pool: node dist\/cli\.js status \(/m);
    const key = readFileSync(path.join(state, 'client-key'), 'utf8').trim();
    assert.ok(!demo.stdout().includes(key), 'no printed line holds the key');

    const status = await runCli(['status', '--json'], 10_000, { env });
    assert.equal(status.code, 0, status.stderr);
    assert.deepEqual(
      (JSON.parse(status.stdout) as StatusReport).accounts.map((a) => a.label),
      ['work', 'personal', 'team'],
    );

    const file = path.join(home, 'proxy.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const text = readFileSync(file, 'utf8');
    assert.deepEqual(JSON.parse(text), { url, pid: demo.child.pid, stateDir: state });
    assert.ok(!text.includes(key), 'the discovery file holds no key');

    await demo.stop();
    assert.ok(!existsSync(file), 'the demo unregisters when it stops');
    const after = await runCli(['status'], 10_000, { env });
    assert.equal(after.code, 2, after.stderr);
    assert.match(after.stderr, /no client key in .* and no proxy registered there/);
  });

  it('plain `rotate-key` with the demo registered says the demo keeps its own key, and how to rotate that one', async () => {
    const { state } = await startDemo();
    const demoKey = readFileSync(path.join(state, 'client-key'), 'utf8');
    const r = await runCli(['rotate-key'], 10_000, { env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^new client key written to ${home}/client-key$`, 'm'));
    assert.match(
      r.stdout,
      new RegExp(`runs from another state directory and keeps its own key, unchanged; to rotate that one: claude-router rotate-key --state-dir ${state}$`, 'm'),
    );
    assert.equal(readFileSync(path.join(state, 'client-key'), 'utf8'), demoKey, "the demo's key is unchanged");
    assert.equal((await runCli(['status', '--json'], 10_000, { env })).code, 0, 'status still reaches the demo');
  });

  it('a demo leaves a registered proxy in place and prints the --state-dir that finds it; --state-dir selects either', async () => {
    const sim = await startFakeUpstream({ accounts: [{ label: 'mine', accessToken: 'sk-ant-oat01-discovery-mine', refreshToken: 'sk-ant-ort01-discovery-mine' }] });
    cleanups.push(() => sim.close());
    const added = await runCli(['accounts', 'add', '--label', 'mine'], 10_000, { env, input: 'sk-ant-oat01-discovery-mine\nsk-ant-ort01-discovery-mine\n' });
    assert.equal(added.code, 0, added.stderr);
    const proxy = spawnCli(['start', '--port', '0', '--upstream-url', sim.url, '--token-url', sim.tokenUrl], { env });
    cleanups.push(() => proxy.stop());
    await waitForStdout(proxy, /^listening on /m);

    const { demo, state } = await startDemo();
    const line = demo.stdout().match(/^Watch the pool: node dist\/cli\.js status --state-dir '([^']+)' /m);
    assert.ok(line, demo.stdout());
    assert.equal(line[1], state);

    const labelsOf = async (args: string[]) => {
      const r = await runCli(['status', '--json', ...args], 10_000, { env });
      assert.equal(r.code, 0, r.stderr);
      return (JSON.parse(r.stdout) as StatusReport).accounts.map((a) => a.label);
    };
    assert.deepEqual(await labelsOf([]), ['mine'], 'plain status: the proxy registered first');
    assert.deepEqual(await labelsOf(['--state-dir', state]), ['work', 'personal', 'team'], '--state-dir: the demo');
  });
});
