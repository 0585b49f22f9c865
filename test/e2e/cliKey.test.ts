/**
 * The BUILT router CLI (`node dist/cli.js`) and the local client key: `status` sends it only to
 * a holder of the port that proved it knows it; `rotate-key` replaces it, and a running proxy
 * refuses the old one by the time the command returns.
 */
import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli, startRouterCli, type CliProcess } from '../support/routerCli';
import { startPortHolder, type PortHolder } from '../support/squatter';

describe('e2e: claude-router and the client key', function () {
  this.timeout(30_000);

  let dir: string;
  let squatter: PortHolder | undefined;
  let proxy: CliProcess | undefined;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-cli-key-'));
  });
  afterEach(async () => {
    await squatter?.close();
    squatter = undefined;
    await proxy?.stop();
    proxy = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('status never sends the key to a program squatting the configured port, and says so', async () => {
    squatter = await startPortHolder();
    const stateDir = path.join(dir, 'state');
    const key = 'clr-squatter-test-key-0123456789abcdef';
    const config = path.join(dir, 'proxy-config.yaml');
    writeFileSync(config, `listen:\n  port: ${squatter.port}\nstate-dir: ${JSON.stringify(stateDir)}\n`);
    // The key where `start` keeps it: <state-dir>/client-key.
    mkdirSync(stateDir, { recursive: true });
    writeFileSync(path.join(stateDir, 'client-key'), key + '\n', { mode: 0o600 });

    const r = await runCli(['status', '--config', config]);
    assert.equal(r.code, 1, `stdout: ${r.stdout}\nstderr: ${r.stderr}`);
    assert.match(r.stderr, /could not prove it is Claude Router/);
    assert.ok(squatter.requests.length > 0, 'the squatter was asked');
    assert.ok(!squatter.allHeaderText().includes(key), 'the key never reached the squatter');
    assert.ok(!r.stderr.includes(key) && !r.stdout.includes(key), 'nor the output');
    assert.doesNotMatch(r.stdout, /ACCOUNT/);
  });

  it('rotate-key writes a new 0600 key that a running proxy takes at once: the old key gets 401, the new one works', async () => {
    const stateDir = path.join(dir, 'state');
    const config = path.join(dir, 'proxy-config.yaml');
    writeFileSync(config, `listen:\n  host: 127.0.0.1\n  port: 0\nupstream:\n  base-url: "http://127.0.0.1:9"\nstate-dir: ${JSON.stringify(stateDir)}\n`);
    const started = await startRouterCli(config);
    proxy = started.proc;
    const keyFile = path.join(stateDir, 'client-key');
    const old = readFileSync(keyFile, 'utf8').trim();
    const status = (key: string) => fetch(`${started.url}/status`, { headers: { 'x-claude-router-key': key } }).then((r) => r.status);
    assert.equal(await status(old), 200);

    const r = await runCli(['rotate-key', '--config', config]);
    assert.equal(r.code, 0, `stdout: ${r.stdout}\nstderr: ${r.stderr}`);
    const fresh = readFileSync(keyFile, 'utf8').trim();
    assert.notEqual(fresh, old);
    assert.match(fresh, /^clr-[A-Za-z0-9_-]{43}$/);
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    assert.ok(!r.stdout.includes(fresh) && !r.stderr.includes(fresh), 'the key is not printed');
    assert.match(r.stdout, /refuses the previous key/);
    assert.equal(await status(old), 401, 'the old key is refused as soon as the command returns');
    assert.equal(await status(fresh), 200, 'the new key works');

    const s = await runCli(['status', '--config', config]);
    assert.equal(s.code, 0, `stderr: ${s.stderr}`);
  });

  it('rotate-key refuses when the config file sets client-key, and changes nothing', async () => {
    const config = path.join(dir, 'proxy-config.yaml');
    writeFileSync(config, `state-dir: ${JSON.stringify(path.join(dir, 'state'))}\nclient-key: "clr-configured-key-0123456789"\n`);
    const r = await runCli(['rotate-key', '--config', config]);
    assert.equal(r.code, 2, `stderr: ${r.stderr}`);
    assert.match(r.stderr, /sets client-key: change it there/);
    assert.doesNotMatch(r.stderr, /clr-configured-key/);
  });
});
