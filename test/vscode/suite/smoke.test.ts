/**
 * Smoke test, run inside the real extension host (see ./index.ts): the extension is
 * present, activates and returns its API, and contributes its commands.
 */
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';

export const EXTENSION_ID = 'claude-account-router.claude-account-router';

describe('extension smoke (inside VS Code)', () => {
  it(`finds ${EXTENSION_ID} and activates it with an API object`, async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(
      ext,
      `extension ${EXTENSION_ID} not found; loaded: ${vscode.extensions.all
        .map((e) => e.id)
        .filter((id) => !id.startsWith('vscode.'))
        .join(', ')}`,
    );
    const api: unknown = await ext.activate();
    assert.ok(api, `activate() returned ${String(api)}`);
    assert.equal(ext.isActive, true);
  });

  it('registers claudeRouter.showStatus', async () => {
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes('claudeRouter.showStatus'), 'claudeRouter.showStatus is not registered');
  });
});
