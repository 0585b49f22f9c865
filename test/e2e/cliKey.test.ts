/**
 * The BUILT router CLI (`node dist/cli.js`) and the local client key: `status` sends it only to
 * a holder of the port that proved it knows it.
 */
import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../support/routerCli';
import { startPortHolder, type PortHolder } from '../support/squatter';

describe('e2e: claude-router and the client key', function () {
  this.timeout(30_000);

  let dir: string;
  let squatter: PortHolder | undefined;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-cli-key-'));
  });
  afterEach(async () => {
    await squatter?.close();
    squatter = undefined;
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
});
