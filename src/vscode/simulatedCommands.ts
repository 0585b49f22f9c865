/**
 * The simulated accounts' commands (simulatedAccounts.ts): Try with Simulated Accounts (which sends
 * sample traffic at once, so the numbers move), Send Sample Traffic, Stop Simulated Accounts.
 *
 * Sample traffic: 8 conversations of 4 turns, one started every 1.5 s (about 20 s in all), through
 * this window's proxy; when half have started, the account most conversations are bound to is
 * throttled once (30 s), so a conversation fails over and the session timeline shows the switch.
 */
import * as vscode from 'vscode';
import { runSampleTraffic, type SampleTrafficResult } from '../sim';
import type { RouterService } from './routerService';
/** How long the halfway throttle lasts (s): long enough to see it in the panel. */
const THROTTLE_S = 30;

/** What the sample traffic promises, for the notification that starts it. */
function sampleTrafficText(): string {
  return vscode.l10n.t('8 conversations over about 20 s; halfway, one account is throttled once ({0} s), so you see a request fail over', THROTTLE_S);
}

/**
 * Sends the sample traffic through this window's proxy to the simulated accounts; stops when the
 * simulated accounts stop (before the proxy returns to the real ones).
 * @throws Error when simulated accounts are not serving
 */
function sendSampleTraffic(service: RouterService): Promise<SampleTrafficResult> {
  const sim = service.simulatedUpstream;
  const signal = service.simulationSignal;
  if (!sim || !signal) throw new Error(vscode.l10n.t('sample traffic goes to simulated accounts only: start them first ("Try with Simulated Accounts")'));
  return runSampleTraffic({
    url: service.url,
    clientKey: service.clientKey,
    signal,
    halfway: () => {
      // The account most conversations are bound to: one of them is the next to hit the throttle and move.
      const status = service.engine?.status();
      const bound = new Map<string, number>();
      for (const b of status?.sessions ?? []) bound.set(b.account, (bound.get(b.account) ?? 0) + 1);
      const busiest = [...bound].sort((x, y) => y[1] - x[1])[0]?.[0] ?? status?.preview.verdicts.find((v) => v.verdict === 'selected')?.account;
      if (busiest && !signal.aborted) sim.injectFault(busiest, { kind: 'throttle', retryAfterS: THROTTLE_S });
    },
  });
}

/**
 * Registers the commands. `showStatus` opens the routing status panel.
 * The context key `claudeRouter.simulated` follows the mode (menus show Send Sample Traffic then).
 */
export function registerSimulatedCommands(service: RouterService, showStatus: () => void): vscode.Disposable[] {
  let running: Promise<unknown> | undefined;
  const traffic = () => {
    running ??= sendSampleTraffic(service)
      .catch((err: unknown) => void vscode.window.showErrorMessage(`Claude Router: ${(err as Error).message}`))
      .finally(() => (running = undefined));
  };
  const setContext = () => void vscode.commands.executeCommand('setContext', 'claudeRouter.simulated', service.simulated);
  setContext();
  const reg = (id: string, fn: () => unknown) => vscode.commands.registerCommand(`claudeRouter.${id}`, fn);
  return [
    service.onDidChange(setContext),
    reg('trySimulated', async () => {
      try {
        await service.startSimulated();
      } catch (err) {
        void vscode.window.showErrorMessage(`Claude Router: ${(err as Error).message}`);
        return;
      }
      traffic();
      void vscode.window
        .showInformationMessage(
          vscode.l10n.t(
            'Claude Router: routing between three simulated accounts with a demo policy (headroom-first, session affinity; your settings override it). Sample traffic is on its way: {0}. Run "claude" in a new terminal to add your own.',
            sampleTrafficText(),
          ),
          vscode.l10n.t('Show Routing Status'),
        )
        .then((c) => (c ? showStatus() : undefined));
    }),
    reg('sendSampleTraffic', () => {
      if (!service.simulated) {
        void vscode.window
          .showInformationMessage(vscode.l10n.t('Claude Router: sample traffic goes to simulated accounts only.'), vscode.l10n.t('Try with Simulated Accounts'))
          .then((c) => (c ? vscode.commands.executeCommand('claudeRouter.trySimulated') : undefined));
        return;
      }
      if (running) {
        void vscode.window.showInformationMessage(vscode.l10n.t('Claude Router: sample traffic is already running.'));
        return;
      }
      traffic();
      void vscode.window
        .showInformationMessage(vscode.l10n.t('Claude Router: sending sample traffic: {0}.', sampleTrafficText()), vscode.l10n.t('Show Routing Status'))
        .then((c) => (c ? showStatus() : undefined));
    }),
    reg('stopSimulated', () => service.stopSimulated()),
  ];
}
