/**
 * `claude-router accounts reset-cooldown <label>` with the BUILT CLI (`node dist/cli.js`) against a
 * running `claude-router start`: it finds the proxy through the config's state directory, lifts the
 * account's cooldown there (the next request is served by that account), says what it lifted, and
 * refuses an unknown label with exit 2.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { startFakeUpstream, type FakeUpstream } from '../../src/sim';
import { proxyConfigYaml, runCli, startRouterCli, type CliProcess } from '../support/routerCli';

const DAY = 86_400_000;
const KEY = 'reset-cooldown-e2e-key-0123456789';

describe('e2e: claude-router accounts reset-cooldown', function () {
  this.timeout(60_000);
  let dir: string;
  let sim: FakeUpstream;
  let proc: CliProcess | undefined;
  afterEach(async () => {
    await proc?.stop();
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ask = (url: string, session: string) =>
    request(`${url}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', authorization: `Bearer ${KEY}`, 'x-claude-code-session-id': session },
      body: JSON.stringify({ model: 'claude-sonnet-4-5-20250929', max_tokens: 64, messages: [{ role: 'user', content: 'say hi' }] }),
    }).then(async (r) => ({ status: r.statusCode, account: r.headers['x-claude-router-account'], text: await r.body.text() }));

  it('lifts the cooldown of a running proxy’s account; an unknown label exits 2', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-reset-cli-'));
    const spec = [
      { label: 'work', accessToken: 'sk-ant-oat01-reset-work', refreshToken: 'sk-ant-ort01-reset-work', sevenDayResetInMs: DAY, initialSevenDayUsed: 0.5 },
      { label: 'personal', accessToken: 'sk-ant-oat01-reset-personal', refreshToken: 'sk-ant-ort01-reset-personal', sevenDayResetInMs: 3 * DAY, initialSevenDayUsed: 0.1 },
    ];
    sim = await startFakeUpstream({ accounts: spec });
    const config = path.join(dir, 'proxy-config.yaml');
    writeFileSync(config, proxyConfigYaml({ port: 0, baseUrl: sim.url, tokenUrl: sim.tokenUrl, stateDir: path.join(dir, 'state'), clientKey: KEY, accounts: spec }));
    const started = await startRouterCli(config);
    proc = started.proc;
    // The start-up sweep reads both accounts first, so the fault below is met by a request, not by a usage reading.
    for (const end = Date.now() + 10_000; ;) {
      const st = (await (await request(`${started.url}/status`, { headers: { 'x-claude-router-key': KEY } })).body.json()) as {
        accounts: { evidence: { source: string | null } }[];
      };
      if (st.accounts.every((a) => a.evidence.source === 'usage')) break;
      assert.ok(Date.now() < end, 'the start-up sweep read both accounts');
      await new Promise((r) => setTimeout(r, 100));
    }

    sim.injectFault('work', { kind: 'exhaust', window: '7d', resetInMs: 3 * DAY });
    assert.equal((await ask(started.url, 's1')).account, 'personal');
    sim.clearFaults('work'); // the upstream resets it early; the user knows

    const r = await runCli(['accounts', 'reset-cooldown', 'work', '--config', config]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^"work": lifted the window exhausted cooldown until \d{4}-\d\d-\d\dT.*; its quota data showed a rejected window and is read again\n$/);
    assert.doesNotMatch(r.stdout + r.stderr, /sk-ant-|reset-cooldown-e2e-key/);

    const status = await runCli(['status', '--json', '--config', config]);
    const work = (JSON.parse(status.stdout) as { accounts: { label: string; coolingUntil: string | null; usable: boolean }[] }).accounts.find((a) => a.label === 'work')!;
    assert.equal(work.coolingUntil, null);
    assert.equal(work.usable, true);

    // The global --state-dir finds the proxy too (its discovery file), before the subcommand as after it.
    const again = await runCli(['--state-dir', path.join(dir, 'state'), 'accounts', 'reset-cooldown', 'work'], 10_000, { env: { CLAUDE_ROUTER_KEY: KEY } });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, '"work": no cooldown was running\n');

    const unknown = await runCli(['accounts', 'reset-cooldown', 'nobody', '--config', config]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /the running proxy has no account named "nobody"/);
  });
});
