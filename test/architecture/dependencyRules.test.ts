/**
 * The layer rules in .dependency-cruiser.cjs bite: the same command `npm run check:deps` runs,
 * pointed at a small tree with one forbidden import per rule (and a few allowed ones), reports
 * exactly the forbidden ones, each under the name of its rule.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const DEPCRUISE = path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const RULES = path.join(ROOT, '.dependency-cruiser.cjs');

/** path → source; every file imports only what its lines say. */
const TREE: Record<string, string> = {
  'src/quota/limits.ts': `export const LIMIT = 1;\n`,
  'src/quota/clock.ts': `import { statSync } from 'node:fs';\nexport const mtime = (p: string) => statSync(p).mtimeMs;\n`,
  'src/routing/ok.ts': `import { LIMIT } from '../quota/limits';\nexport const cap = LIMIT;\n`,
  'src/routing/plan.ts': `import { serve } from '../proxy/server';\nexport const plan = serve;\n`,
  'src/routing/a.ts': `import type { B } from './b';\nexport interface A { b?: B }\n`,
  'src/routing/b.ts': `import type { A } from './a';\nexport interface B { a?: A }\n`,
  'src/accounts/account.ts': `import { cap } from '../routing/ok';\nimport { WINDOW } from '../sim/windows';\nexport const n = cap + WINDOW;\n`,
  'src/config/load.ts': `import type { B } from '../routing/b';\nimport type { n } from '../accounts/account';\nexport type C = B | typeof n;\n`,
  'src/proxy/server.ts': `import { cap } from '../routing/ok';\nimport { shared } from '../store/shared';\nexport const serve = cap + shared;\n`,
  'src/store/shared.ts': `import { cap } from '../routing/ok';\nimport type { n } from '../accounts/account';\nimport type { C } from '../config/load';\nimport { pool } from '../proxy/pool';\nexport const shared: [number, typeof n?, C?] = [cap + pool];\n`,
  'src/proxy/pool.ts': `export const pool = 2;\n`,
  'src/store/connection.ts': `export class Connection {}\n`,
  'src/store/open.ts': `import type { Connection } from './connection';\nexport const open = async (): Promise<Connection> => new (await import('./connection')).Connection();\n`,
  'src/proxy/redis.ts': `import { Connection } from '../store/connection';\nexport const c = new Connection();\n`,
  'src/proxy/ui.ts': `import * as vscode from 'vscode';\nimport { main } from '../cli/main';\nexport const ui = [vscode, main];\n`,
  'src/cli/main.ts': `import { serve } from '../proxy/server';\nimport { FAKE } from '../sim/fake';\nimport { ext } from '../vscode/ext';\nexport const main = [serve, FAKE, ext];\n`,
  'src/vscode/ext.ts': `import * as vscode from 'vscode';\nimport { FAKE } from '../sim/fake';\nexport const ext = [vscode, FAKE];\n`,
  'src/sim/windows.ts': `import { createServer } from 'node:http';\nexport const WINDOW = 5;\nexport const s = createServer;\n`,
  'src/sim/fake.ts': `import { WINDOW } from './windows';\nimport { cap } from '../routing/ok';\nexport const FAKE = WINDOW + cap;\n`,
  'src/webview/page.ts': `import type { B } from '../routing/b';\nimport { LIMIT } from '../quota/limits';\nimport { serve } from '../proxy/server';\nexport const p: [number, B?] = [LIMIT + serve];\n`,
  'src/whatif/replay.ts': `import { cap } from '../routing/ok';\nimport { WINDOW } from '../sim/windows';\nimport { FAKE } from '../sim/fake';\nimport type { C } from '../config/load';\nexport const r: [number, C?] = [cap + WINDOW + FAKE];\n`,
  'src/whatif/serve.ts': `import { createServer } from 'node:http';\nimport { serve } from '../proxy/server';\nimport { main } from '../cli/main';\nimport { ext } from '../vscode/ext';\nimport { n } from '../accounts/account';\nexport const s = [createServer, serve, main, ext, n];\n`,
  'src/proxy/engine.ts': `export const handle = 1;\n`,
  'src/proxy/pipeline/step.ts': `import { head } from '../http/head';\nimport { answer } from '../relay/answer';\nimport { known } from '../state/known';\nimport { handle } from '../engine';\nexport const step = [head, answer, known, handle];\n`,
  'src/proxy/http/head.ts': `import { answer } from '../relay/answer';\nexport const head = answer;\n`,
  'src/proxy/http/upward.ts': `import { step } from '../pipeline/step';\nexport const up = step;\n`,
  'src/proxy/upstream/call.ts': `export const call = 1;\n`,
  'src/proxy/upstream/upward.ts': `import { head } from '../http/head';\nexport const up = head;\n`,
  'src/proxy/state/known.ts': `import { call } from '../upstream/call';\nexport const known = call;\n`,
  'src/proxy/state/upward.ts': `import { handle } from '../engine';\nexport const up = handle;\n`,
  'src/proxy/relay/answer.ts': `import { call } from '../upstream/call';\nexport const answer = call;\n`,
  'src/proxy/relay/upward.ts': `import { step } from '../pipeline/step';\nexport const up = step;\n`,
};

/** rule name: from → to (a cycle is reported once, by its first step). */
const EXPECTED = [
  'accounts-imports-only-quota-and-routing: src/accounts/account.ts → src/sim/windows.ts',
  'cli-not-to-vscode: src/cli/main.ts → src/vscode/ext.ts',
  'config-imports-only-routing-and-quota: src/config/load.ts → src/accounts/account.ts',
  'no-circular: src/routing/a.ts → src/routing/b.ts',
  'only-shells-and-whatif-import-sim: src/accounts/account.ts → src/sim/windows.ts',
  'only-vscode-imports-vscode: src/proxy/ui.ts → vscode',
  'proxy-http-below-the-pipeline: src/proxy/http/upward.ts → src/proxy/pipeline/step.ts',
  'proxy-not-to-shells-sim-or-whatif: src/proxy/ui.ts → src/cli/main.ts',
  'proxy-relay-below-the-pipeline: src/proxy/relay/upward.ts → src/proxy/pipeline/step.ts',
  'proxy-state-below-the-pipeline: src/proxy/state/upward.ts → src/proxy/engine.ts',
  'proxy-upstream-is-the-bottom: src/proxy/upstream/upward.ts → src/proxy/http/head.ts',
  'redis-client-loaded-on-demand: src/proxy/redis.ts → src/store/connection.ts',
  'routing-and-quota-are-pure: src/quota/clock.ts → fs',
  'routing-imports-only-quota: src/routing/plan.ts → src/proxy/server.ts',
  'sim-imports-no-engine-layer: src/sim/fake.ts → src/routing/ok.ts',
  'sim-world-model-is-pure: src/sim/windows.ts → http',
  'store-imports-only-accounts-config-quota-routing: src/store/shared.ts → src/proxy/pool.ts',
  'webview-runs-in-a-browser: src/webview/page.ts → src/proxy/server.ts',
  'whatif-imports-only-routing-quota-and-world-model: src/whatif/replay.ts → src/config/load.ts',
  'whatif-imports-only-routing-quota-and-world-model: src/whatif/serve.ts → src/accounts/account.ts',
  'whatif-imports-only-routing-quota-and-world-model: src/whatif/serve.ts → src/cli/main.ts',
  'whatif-imports-only-routing-quota-and-world-model: src/whatif/serve.ts → src/proxy/server.ts',
  'whatif-imports-only-routing-quota-and-world-model: src/whatif/serve.ts → src/vscode/ext.ts',
  'whatif-imports-only-sim-world-model: src/whatif/replay.ts → src/sim/fake.ts',
  'whatif-is-pure: src/whatif/serve.ts → http',
];

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

/** Runs the dependency-cruiser CLI with the project's rule file on `cwd`'s src/. */
function depcruise(cwd: string, outputType: 'json' | 'err'): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [DEPCRUISE, 'src', '--config', RULES, '--output-type', outputType], { cwd, maxBuffer: 16 << 20 }, (error, stdout) => {
      if (error && typeof error.code !== 'number') reject(new Error(`dependency-cruiser did not run: ${error.message}`, { cause: error }));
      else resolve({ code: error ? Number(error.code) : 0, stdout });
    });
  });
}

describe('dependency rules (.dependency-cruiser.cjs)', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'layers-'));
    for (const [file, source] of Object.entries(TREE)) {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), source);
    }
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('fails on each forbidden import, naming its rule, and passes the allowed ones', async () => {
    // The JSON report for the exact list, the text report (the one `npm run check:deps` prints) for the exit code.
    const [json, text] = await Promise.all([depcruise(dir, 'json'), depcruise(dir, 'err')]);
    const violations = (JSON.parse(json.stdout) as { summary: { violations: Violation[] } }).summary.violations;
    const found = violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
    assert.deepEqual(found, EXPECTED);
    assert.equal(text.code, EXPECTED.length, `the check exits with its error count:\n${text.stdout}`);
    for (const line of EXPECTED) assert.ok(text.stdout.includes(`error ${line.slice(0, line.indexOf(':'))}:`), line);
  });
});
