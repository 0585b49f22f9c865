/**
 * Runs the extension's own suite (test/vscode/suite/**, a mocha run inside VS Code) in the
 * real extension host of code-server 4.139.1 (VS Code 1.139.1), driven by headless Chromium:
 * once directly through runExtensionTests, once the way @vscode/test-electron users run it,
 * with scripts/code-shim.sh as the "VS Code executable".
 *
 * Needs `npm run build` (dist/extension.js) and scripts/install-code-server.sh, both of which
 * `npm test` runs first. Output of the extension host is printed as `[vscode] ...` lines; on a
 * failure or timeout a screenshot and the logs land in test-artifacts/.
 *
 * CLAUDE_ROUTER_VSCODE_EXTENSION_PATH points the runs at another extension folder (e.g. a
 * stand-in while the real one is being written); CLAUDE_ROUTER_VSCODE_GREP filters the suite.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from '../support/net';
import { startPortHolder } from '../support/squatter';
import { REPO_ROOT, runExtensionTests, writeQuietSettings } from './codeServer';
import { parseShimArgs } from './codeShim';

const extensionDevelopmentPath = path.resolve(process.env.CLAUDE_ROUTER_VSCODE_EXTENSION_PATH || REPO_ROOT);
const extensionTestsPath = path.join(REPO_ROOT, 'out', 'test', 'vscode', 'suite', 'index.js');
const shim = path.join(REPO_ROOT, 'scripts', 'code-shim.sh');

/** A user-data folder whose settings put the proxy on a free port. */
async function userDataWithFreePort(parent: string): Promise<string> {
  const dir = path.join(parent, 'user-data');
  writeQuietSettings(dir, { 'claudeRouter.port': await freePort() });
  return dir;
}

function assertExtensionBuilt(): void {
  const pkg = JSON.parse(fs.readFileSync(path.join(extensionDevelopmentPath, 'package.json'), 'utf8')) as { main?: string };
  assert.ok(pkg.main, `${extensionDevelopmentPath}/package.json has no "main"`);
  const main = path.resolve(extensionDevelopmentPath, pkg.main);
  const candidates = [main, `${main}.js`];
  assert.ok(
    candidates.some((f) => fs.existsSync(f)),
    `the extension's main ${main} does not exist: run \`npm run build\` first`,
  );
}

describe('VS Code extension host (code-server + Chromium)', function () {
  this.timeout(180_000);

  it('runs the extension suite inside the real extension host with exit code 0', async () => {
    assertExtensionBuilt();
    const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'ext-host-'));
    try {
      const userDataDir = await userDataWithFreePort(temp);
      const code = await runExtensionTests({ extensionDevelopmentPath, extensionTestsPath, timeoutMs: 150_000, userDataDir });
      assert.equal(code, 0, 'the extension host suite failed: see the [vscode] lines above and test-artifacts/');
    } finally {
      fs.rmSync(temp, { recursive: true, force: true });
    }
  });

  it('runs through @vscode/test-electron with scripts/code-shim.sh as the VS Code executable', async () => {
    assertExtensionBuilt();
    const { runTests } = await import('@vscode/test-electron');
    const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'test-electron-shim-'));
    try {
      const workspace = path.join(temp, 'workspace');
      fs.mkdirSync(workspace);
      const userDataDir = await userDataWithFreePort(temp);
      // skipExtensionDependencies: no attempt to download VS Code for extension dependencies
      // (an option of newer test-electron releases; 2.5 never downloads with vscodeExecutablePath).
      const options: Parameters<typeof runTests>[0] & { skipExtensionDependencies?: boolean } = {
        vscodeExecutablePath: shim,
        extensionDevelopmentPath,
        extensionTestsPath,
        skipExtensionDependencies: true,
        launchArgs: [workspace, `--user-data-dir=${userDataDir}`, `--extensions-dir=${path.join(temp, 'extensions')}`],
        // The same suite as above, run the way @vscode/test-electron users run it.
        extensionTestsEnv: process.env.CLAUDE_ROUTER_VSCODE_GREP ? { CLAUDE_ROUTER_VSCODE_GREP: process.env.CLAUDE_ROUTER_VSCODE_GREP } : {},
      };
      assert.equal(await runTests(options), 0);
    } finally {
      fs.rmSync(temp, { recursive: true, force: true });
    }
  });

  it("on a port a squatter holds: the window sends it no key, sets no terminal environment, its alert's actions show the holder and pick another port, and it leads once the squatter leaves", async () => {
    assertExtensionBuilt();
    const squatter = await startPortHolder();
    const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'ext-host-squatted-'));
    try {
      const userDataDir = path.join(temp, 'user-data');
      writeQuietSettings(userDataDir, { 'claudeRouter.port': squatter.port });
      // The squatter runs in this process: the window's "Show What Holds It" names its id.
      const env = { CLAUDE_ROUTER_TEST_SQUATTER: squatter.url, CLAUDE_ROUTER_TEST_SQUATTER_PID: String(process.pid), CLAUDE_ROUTER_VSCODE_GREP: 'squatted port' };
      const code = await runExtensionTests({ extensionDevelopmentPath, extensionTestsPath, timeoutMs: 150_000, userDataDir, env });
      assert.equal(code, 0, 'the squatted-port test failed: see the [vscode] lines above and test-artifacts/');
      assert.ok(
        squatter.requests.some((r) => r.url === '/__leave'),
        'the test inside the extension host ran',
      );
    } finally {
      await squatter.close();
      fs.rmSync(temp, { recursive: true, force: true });
    }
  });
});

describe('code shim argument parsing', () => {
  it('accepts what @vscode/test-electron passes, in both flag forms', () => {
    const a = parseShimArgs([
      '/ws',
      '--user-data-dir=/u',
      '--no-sandbox',
      '--disable-gpu-sandbox',
      '--extensionTestsPath=/ext/out/index.js',
      '--extensionDevelopmentPath=/ext',
      '--extensions-dir',
      '/e',
    ]);
    assert.deepEqual(a.extensionDevelopmentPath, ['/ext']);
    assert.equal(a.extensionTestsPath, '/ext/out/index.js');
    assert.equal(a.userDataDir, '/u');
    assert.equal(a.extensionsDir, '/e');
    assert.equal(a.folder, '/ws');
    assert.deepEqual(a.ignored, ['--no-sandbox', '--disable-gpu-sandbox']);
  });
});
