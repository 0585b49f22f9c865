/**
 * Entry point of the extension's integration suite (`extensionTestsPath`): VS Code — here
 * code-server's extension host, or a desktop VS Code via @vscode/test-electron — loads this
 * module inside the extension host and calls `run()`. It runs mocha (bdd) over every
 * `*.test.js` compiled next to it (out/test/vscode/suite/**) and rejects when a test fails,
 * which makes the host exit with code 1.
 *
 * These tests import 'vscode': they run only inside VS Code, never in the plain `mocha` run
 * (.mocharc.cjs ignores out/test/vscode/suite/**); test/vscode/extensionHost.test.ts starts them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha = require('mocha');

function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...testFiles(p));
    else if (e.name.endsWith('.test.js')) out.push(p);
  }
  return out.sort();
}

/** The name of the test run only on a squatted port (test/vscode/suite/extension.test.ts). */
const SQUATTED = 'squatted port';

export async function run(): Promise<void> {
  const mocha = new Mocha({
    ui: 'bdd',
    color: false,
    timeout: Number(process.env.CLAUDE_ROUTER_VSCODE_TEST_TIMEOUT) || 20_000,
    // Optional filter for a quicker loop: CLAUDE_ROUTER_VSCODE_GREP='status bar'. Without one, every test but the
    // squatted-port one, which needs a squatter on the port before the window starts (extensionHost.test.ts runs it alone).
    ...(process.env.CLAUDE_ROUTER_VSCODE_GREP ? { grep: process.env.CLAUDE_ROUTER_VSCODE_GREP } : { grep: SQUATTED, invert: true }),
  });
  const files = testFiles(__dirname);
  if (files.length === 0) throw new Error(`no *.test.js under ${__dirname}`);
  for (const f of files) mocha.addFile(f);
  await new Promise<void>((resolve, reject) => {
    try {
      const runner = mocha.run((failures) => {
        const s = runner.stats;
        console.log(`extension host: ${s?.passes ?? 0} passed, ${failures} failed${s?.pending ? `, ${s.pending} skipped` : ''}`);
        if (failures > 0) reject(new Error(`${failures} extension test(s) failed`));
        else resolve();
      });
    } catch (err) {
      reject(err instanceof Error ? err : new Error(String(err)));
    }
  });
}
