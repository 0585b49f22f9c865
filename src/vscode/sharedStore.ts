/**
 * The extension's side of a shared pool (docs/shared-pool.md): `claudeRouter.stateStore` (a Redis
 * URL, application scope) → the connection, its password and the pool's key from SecretStorage,
 * and the shared credential store over the account secrets. The key is created here on first use;
 * "Export State Store Key" copies it to the clipboard for the other machines (a CLI's key file holds
 * the same 64 hex digits), "Import State Store Key" takes one, "Set State Store Password" keeps the
 * password out of settings.
 */
import * as vscode from 'vscode';
import type { CredentialStore } from '../accounts/types';
import type { Logger } from '../proxy/log';
import { keyFromText, newKeyText } from '../store/encryption';
import { openSharedStore, type SharedStore } from '../store/openStore';
import { parseStoreUrl } from '../config/storeUrl';

/** SecretStorage keys of the pool's key (64 hex digits) and of the store's password. */
export const STORE_KEY_SECRET = 'claudeRouter.stateStore.key';
export const STORE_PASSWORD_SECRET = 'claudeRouter.stateStore.password';

/**
 * Connects to `url` with the password and key from SecretStorage (the key created when missing).
 * @throws Error naming `claudeRouter.stateStore` when the URL is not a redis:// or rediss:// one
 */
export async function openStoreFromSettings(
  url: string,
  context: Pick<vscode.ExtensionContext, 'secrets' | 'globalStorageUri'>,
  local: CredentialStore,
  log: Logger,
): Promise<SharedStore> {
  const secrets = context.secrets;
  const target = parseStoreUrl(url);
  const password = await secrets.get(STORE_PASSWORD_SECRET);
  if (password) target.password = password;
  let keyText = await secrets.get(STORE_KEY_SECRET);
  if (!keyText) {
    keyText = newKeyText();
    await secrets.store(STORE_KEY_SECRET, keyText);
    void vscode.window.showInformationMessage(
      vscode.l10n.t(
        'Claude Router: created the key tokens are sealed with in the shared store. Run "Export State Store Key" here and "Import State Store Key" (or a CLI key file) on every other machine of the pool.',
      ),
    );
  }
  const key = keyFromText(keyText, 'the state-store key in SecretStorage');
  // The newest sealed version seen of each account's pair (src/store/pairVersions.ts) is kept beside the extension's state.
  return openSharedStore(target, key, local, { log, keySource: 'the key in SecretStorage (Import State Store Key)', stateDir: context.globalStorageUri.fsPath });
}

/** Registers the store's commands (key export and import, password). */
export function registerSharedStoreCommands(secrets: vscode.SecretStorage): vscode.Disposable[] {
  const reload = vscode.l10n.t('Reload Window');
  const askReload = async (message: string) => {
    if ((await vscode.window.showInformationMessage(message, reload)) === reload) await vscode.commands.executeCommand('workbench.action.reloadWindow');
  };
  return [
    vscode.commands.registerCommand('claudeRouter.exportStateStoreKey', async () => {
      const key = await secrets.get(STORE_KEY_SECRET);
      if (!key) return void vscode.window.showWarningMessage(vscode.l10n.t('Claude Router: no state-store key yet: set claudeRouter.stateStore and the first start creates one.'));
      await vscode.env.clipboard.writeText(key);
      void vscode.window.showInformationMessage(
        vscode.l10n.t('Claude Router: the state-store key is on the clipboard. Import it on the other machines, or save it as their key file (0600); then clear the clipboard.'),
      );
    }),
    vscode.commands.registerCommand('claudeRouter.importStateStoreKey', async () => {
      const text = await vscode.window.showInputBox({
        title: vscode.l10n.t('Import State Store Key'),
        prompt: vscode.l10n.t('The 64 hex digits of the pool\'s key (a key file\'s content, or "Export State Store Key" on another machine)'),
        password: true,
        ignoreFocusOut: true,
        validateInput: (v) => {
          try {
            keyFromText(v, 'the key');
            return undefined;
          } catch (err) {
            return (err as Error).message;
          }
        },
      });
      if (!text) return;
      await secrets.store(STORE_KEY_SECRET, text.trim().toLowerCase());
      await askReload(vscode.l10n.t('Claude Router: the state-store key is stored; reload the window to use it.'));
    }),
    vscode.commands.registerCommand('claudeRouter.setStateStorePassword', async () => {
      const text = await vscode.window.showInputBox({
        title: vscode.l10n.t('Set State Store Password'),
        prompt: vscode.l10n.t('The Redis password of claudeRouter.stateStore (empty: none)'),
        password: true,
        ignoreFocusOut: true,
      });
      if (text === undefined) return;
      if (text) await secrets.store(STORE_PASSWORD_SECRET, text);
      else await secrets.delete(STORE_PASSWORD_SECRET);
      await askReload(vscode.l10n.t('Claude Router: the state-store password is stored; reload the window to use it.'));
    }),
  ];
}
