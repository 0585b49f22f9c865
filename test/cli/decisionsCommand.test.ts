import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as args from '../../src/cli/args';
import { runDecisions } from '../../src/cli/decisionsCommand';

describe('cli/decisions: the configuration', () => {
  let dir: string;
  const original = args.configFromArgs;
  const savedKey = process.env.CLAUDE_ROUTER_KEY;
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'decisions-config-'))));
  afterEach(() => {
    (args as { configFromArgs: typeof original }).configFromArgs = original;
    if (savedKey === undefined) delete process.env.CLAUDE_ROUTER_KEY;
    else process.env.CLAUDE_ROUTER_KEY = savedKey;
    rmSync(dir, { recursive: true, force: true });
  });

  it('is resolved once for asking a proxy (not again for its URL and key)', async () => {
    let resolved = 0;
    (args as { configFromArgs: typeof original }).configFromArgs = (file, stateDir) => {
      resolved++;
      return original(file, stateDir);
    };
    process.env.CLAUDE_ROUTER_KEY = 'test-key';
    // Nothing listens on port 1: the command fails after resolving where to ask.
    await assert.rejects(runDecisions({ limit: '5', url: 'http://127.0.0.1:1', stateDir: dir }));
    assert.equal(resolved, 1);
  });
});
