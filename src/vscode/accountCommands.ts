/**
 * Account commands: sign in with Claude (OAuth PKCE, browser opened with
 * `env.openExternal`, `code#state` pasted back), import Claude Code's own
 * login, add from a token, sign in again, rename, remove, enable/disable,
 * reorder, set or clear the primary. Tokens go to SecretStorage only.
 */
import * as vscode from 'vscode';
import { claudeCodeCredentialsPath, readClaudeCodeLogin } from '../accounts/claudeCodeLogin';
import { credentialShape } from '../accounts/credentialShape';
import { exchangeCode, startPkceLogin } from '../accounts/oauthLogin';
import type { AccountInfo, Credentials } from '../accounts/types';
import { RESERVED_LABELS } from '../config/schema';
import type { RouterService } from './routerService';

const LABEL = /^[^\u0000-\u001f\u007f]{1,64}$/;

/** Accepts a label argument (tree item or string) or asks for one. */
export async function pickAccount(service: RouterService, arg: unknown, placeHolder: string): Promise<string | undefined> {
  if (typeof arg === 'string') return arg;
  const fromTree = (arg as { account?: { label?: string } } | undefined)?.account?.label;
  if (fromTree) return fromTree;
  const labels = service.accounts.all().map((a) => a.label);
  if (labels.length === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Claude Router: no accounts yet.'));
    return undefined;
  }
  return vscode.window.showQuickPick(labels, { placeHolder });
}

async function askLabel(service: RouterService, value: string, exclude?: string): Promise<string | undefined> {
  return vscode.window
    .showInputBox({
      title: vscode.l10n.t('Account name'),
      prompt: vscode.l10n.t('A name for this account, shown in the views and the decision log'),
      value,
      // It follows a pasted token or a sign-in: a stray focus change must not throw those away (Escape still cancels).
      ignoreFocusOut: true,
      validateInput: (v) =>
        !LABEL.test(v.trim()) || RESERVED_LABELS.has(v.trim())
          ? vscode.l10n.t('1–64 characters, no control characters, not a reserved name')
          : service.accounts.get(v.trim()) && v.trim() !== exclude
            ? vscode.l10n.t('an account with this name exists')
            : undefined,
    })
    .then((v) => v?.trim());
}

async function saveAccount(service: RouterService, label: string, credentials: Credentials, info: Partial<AccountInfo> = {}): Promise<void> {
  // The secret first: an account never exists in the list without its token.
  await service.store.set(label, credentials);
  const existing = service.accounts.get(label);
  await service.accounts.upsert({ label, kind: 'oauth', fallback: false, enabled: true, ...existing, ...info });
}

export function registerAccountCommands(service: RouterService): vscode.Disposable[] {
  const tokenUrl = () => service.settings.host.tokenUrl;
  const reg = (id: string, fn: (...args: unknown[]) => unknown) => vscode.commands.registerCommand(`claudeRouter.${id}`, fn);

  const signIn = async (existingLabel?: string) => {
    const login = startPkceLogin();
    const opened = await vscode.env.openExternal(vscode.Uri.parse(login.url));
    const pasted = await vscode.window.showInputBox({
      title: vscode.l10n.t('Sign in with Claude'),
      prompt: opened
        ? vscode.l10n.t('Sign in in the browser, then paste the code it shows (code#state) here')
        : vscode.l10n.t('Open {0} in a browser, sign in, then paste the code it shows here', login.url),
      ignoreFocusOut: true,
      password: true,
    });
    if (!pasted) return;
    let credentials: Credentials;
    try {
      credentials = await exchangeCode(tokenUrl(), login, pasted);
    } catch (err) {
      void vscode.window.showErrorMessage(`Claude Router: ${(err as Error).message}`);
      return;
    }
    const label = existingLabel ?? (await askLabel(service, vscode.l10n.t('account {0}', service.accounts.all().length + 1)));
    if (!label) return;
    await saveAccount(service, label, credentials);
    void vscode.window.showInformationMessage(vscode.l10n.t('Claude Router: signed in "{0}".', label));
  };

  return [
    reg('signIn', () => signIn()),
    reg('signInAgain', async (arg) => {
      const label = await pickAccount(service, arg, vscode.l10n.t('Sign in again to which account?'));
      if (label) await signIn(label);
    }),
    reg('addAccount', async () => {
      const choice = await vscode.window.showQuickPick(
        [
          { label: `$(sign-in) ${vscode.l10n.t('Sign in with Claude')}`, id: 'signIn', detail: vscode.l10n.t('Opens the browser; paste the code back') },
          { label: `$(cloud-download) ${vscode.l10n.t("Import Claude Code's login")}`, id: 'importClaudeCodeLogin', detail: '~/.claude/.credentials.json' },
          {
            label: `$(key) ${vscode.l10n.t('Paste a token')}`,
            id: 'addToken',
            detail: vscode.l10n.t('A long-lived token from "claude setup-token", or an API key for a fallback account'),
          },
        ],
        { placeHolder: vscode.l10n.t('Add a Claude account') },
      );
      if (choice) await vscode.commands.executeCommand(`claudeRouter.${choice.id}`);
    }),
    reg('importClaudeCodeLogin', async () => {
      const file = claudeCodeCredentialsPath();
      let login;
      try {
        login = await readClaudeCodeLogin(file);
      } catch (err) {
        void vscode.window.showErrorMessage(`Claude Router: ${(err as Error).message}`);
        return;
      }
      const ok = await vscode.window.showWarningMessage(
        vscode.l10n.t(
          "Importing Claude Code's own login means Claude Code and the router rotate one refresh token: whenever one refreshes it, the other has to sign in again. A separate login per pooled account avoids this.",
        ),
        { modal: true },
        vscode.l10n.t('Import Anyway'),
      );
      if (ok !== vscode.l10n.t('Import Anyway')) return;
      const label = await askLabel(service, `claude-code${login.subscriptionType ? `-${login.subscriptionType}` : ''}`);
      if (!label) return;
      await saveAccount(service, label, { accessToken: login.accessToken, refreshToken: login.refreshToken, expiresAtMs: login.expiresAtMs });
      void vscode.window.showInformationMessage(vscode.l10n.t('Claude Router: imported Claude Code\'s login as "{0}".', label));
    }),
    reg('addToken', async () => {
      const token = await vscode.window.showInputBox({
        title: vscode.l10n.t('Add account from token'),
        prompt: vscode.l10n.t('An OAuth token (sk-ant-oat01-…, e.g. from "claude setup-token") or an API key (sk-ant-api03-…) for a pay-as-you-go fallback'),
        password: true,
        ignoreFocusOut: true,
        validateInput: (v) => (v.trim().length < 16 ? vscode.l10n.t('that does not look like a token') : undefined),
      });
      if (!token) return;
      const apiKey = credentialShape(token) === 'api_key';
      const label = await askLabel(service, apiKey ? 'pay-as-you-go' : vscode.l10n.t('account {0}', service.accounts.all().length + 1));
      if (!label) return;
      await saveAccount(service, label, { accessToken: token.trim() }, apiKey ? { kind: 'api_key', fallback: true } : { kind: 'oauth' });
    }),
    reg('removeAccount', async (arg) => {
      const label = await pickAccount(service, arg, vscode.l10n.t('Remove which account?'));
      if (!label) return;
      const remove = vscode.l10n.t('Remove');
      const ok = await vscode.window.showWarningMessage(vscode.l10n.t('Remove the account "{0}" and forget its token?', label), { modal: true }, remove);
      if (ok !== remove) return;
      await service.accounts.remove(label);
      await service.store.delete(label);
    }),
    reg('renameAccount', async (arg) => {
      const from = await pickAccount(service, arg, vscode.l10n.t('Rename which account?'));
      if (!from) return;
      const to = await askLabel(service, from, from);
      if (!to || to === from) return;
      const creds = await service.store.get(from);
      if (creds) await service.store.set(to, creds);
      await service.accounts.rename(from, to);
      await service.store.delete(from);
      if (service.settings.routing.primaryAccount === from) await service.settings.setPrimaryAccount(to);
    }),
    reg('enableAccount', async (arg) => setEnabled(service, await pickAccount(service, arg, vscode.l10n.t('Enable which account?')), true)),
    reg('disableAccount', async (arg) => setEnabled(service, await pickAccount(service, arg, vscode.l10n.t('Disable which account?')), false)),
    reg('moveAccountUp', async (arg) => {
      const label = await pickAccount(service, arg, vscode.l10n.t('Move which account?'));
      if (label) await service.accounts.move(label, -1);
    }),
    reg('moveAccountDown', async (arg) => {
      const label = await pickAccount(service, arg, vscode.l10n.t('Move which account?'));
      if (label) await service.accounts.move(label, 1);
    }),
    reg('setPrimary', async (arg) => {
      const label = await pickAccount(service, arg, vscode.l10n.t('Make which account the primary?'));
      if (label) await service.settings.setPrimaryAccount(label);
    }),
    reg('clearPrimary', () => service.settings.setPrimaryAccount(undefined)),
  ];
}

async function setEnabled(service: RouterService, label: string | undefined, enabled: boolean): Promise<void> {
  if (!label) return;
  const info = service.accounts.get(label);
  if (info) await service.accounts.upsert({ ...info, enabled });
}
