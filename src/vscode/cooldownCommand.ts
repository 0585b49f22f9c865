/**
 * "Reset Cooldown" on an account of the Accounts view: lifts its cooldown (account-wide and
 * model-scoped) in the proxy that serves — this window's engine when it leads, the leading
 * window's through `POST /accounts/<label>/reset-cooldown` when it follows — so its next request
 * tries it again. For an account the user knows has recovered (an early reset).
 */
import * as vscode from 'vscode';
import type { ResetCooldownAnswer } from '../proxy/pipeline/localEndpoints';
import { postToRouter } from '../proxy/http/identity';
import { pickAccount } from './accountCommands';
import type { RouterService } from './routerService';

/** Registers `claudeRouter.resetCooldown` (argument: a tree item or a label; without one a quick pick). */
export function registerCooldownCommand(service: RouterService): vscode.Disposable {
  return vscode.commands.registerCommand('claudeRouter.resetCooldown', async (arg: unknown) => {
    const label = await pickAccount(service, arg, 'Reset the cooldown of which account?');
    if (!label) return;
    try {
      const answer = await resetCooldown(service, label);
      if (!answer) return void vscode.window.showErrorMessage(`Claude Router: the proxy has no account named "${label}".`);
      const lifted = answer.cooldown !== null || answer.scopedFamilies.length > 0;
      void vscode.window.showInformationMessage(
        lifted ? `Claude Router: the cooldown of "${label}" is reset; its next request tries it again.` : `Claude Router: "${label}" was not cooling down.`,
      );
    } catch (err) {
      void vscode.window.showErrorMessage(`Claude Router: ${(err as Error).message}`);
    }
  });
}

/** Resets in the proxy that serves; undefined when it has no such account. @throws Error when no proxy can be asked */
async function resetCooldown(service: RouterService, label: string): Promise<ResetCooldownAnswer | undefined> {
  const role = service.role;
  const engine = service.engine;
  if ((role.kind === 'leader' || role.kind === 'starting') && engine) return engine.resetCooldown(label);
  if (role.kind !== 'follower') throw new Error(role.kind === 'blocked' ? role.reason : 'the proxy is stopped');
  const res = await postToRouter(role.url, service.clientKey, `/accounts/${encodeURIComponent(label)}/reset-cooldown`);
  if (res.statusCode === 404) return undefined;
  if (res.statusCode !== 200) throw new Error(`the leading window answered ${res.statusCode}`);
  return JSON.parse(res.text) as ResetCooldownAnswer;
}
