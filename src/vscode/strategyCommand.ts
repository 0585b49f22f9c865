/**
 * "Claude Router: Choose Routing Strategy…": a quick pick of every registered strategy (its
 * description and trade-off from the strategy module, the text the Settings UI shows), the
 * current one marked; for `fill-first` a second pick of `account-ranking`. The choice is written
 * to `claudeRouter.routing.strategy` (and `.accountRanking`) for the user, and the running router
 * applies it to the next request. When `claudeRouter.configFile` sets the key, the setting would
 * have no effect: the command says so and writes nothing.
 *
 * Arguments skip the picks: `executeCommand('claudeRouter.chooseStrategy', 'usage-weighted')`, or
 * `('claudeRouter.chooseStrategy', 'fill-first', 'headroom-first')`.
 */
import * as vscode from 'vscode';
import { STRATEGIES, STRATEGY_NAMES, type StrategyName } from '../routing/planner/strategies/registry';
import { ACCOUNT_RANKINGS, type AccountRanking } from '../routing/ranking';
import type { RouterService } from './routerService';

/** What the command did: the values written, or why nothing was. */
export type ChooseStrategyResult =
  { written: true; strategy: StrategyName; accountRanking?: AccountRanking } | { written: false; reason: 'cancelled' | 'invalid' | 'overridden'; file?: string };

/** The config file that sets routing key `kebabKey` (a `/status` source that is a path), if any. */
export function overridingFile(sources: Readonly<Record<string, string>>, kebabKey: string): string | undefined {
  const source = sources[kebabKey];
  if (!source || source === 'default' || source.startsWith('setting ') || source.startsWith('env ')) return undefined;
  return source;
}

/** Markdown of the enum descriptions as plain quick-pick text (no backticks). */
const plain = (md: string) => md.replace(/`/g, '');

/** An argument in an error message: a string quoted, anything else by its type. */
const shown = (v: unknown): string => (typeof v === 'string' ? `"${v}"` : `a ${typeof v}`);

const isStrategy = (v: unknown): v is StrategyName => typeof v === 'string' && (STRATEGY_NAMES as readonly string[]).includes(v);
const isRanking = (v: unknown): v is AccountRanking => typeof v === 'string' && Object.hasOwn(ACCOUNT_RANKINGS, v);

async function pickStrategy(current: string): Promise<StrategyName | undefined> {
  const items = STRATEGY_NAMES.map((name) => ({
    label: name === current ? `$(check) ${name}` : name,
    name,
    description: name === current ? vscode.l10n.t('current · {0}', STRATEGIES[name].summary) : STRATEGIES[name].summary,
    detail: plain(STRATEGIES[name].description),
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('Claude Router: Routing Strategy'),
    placeHolder: vscode.l10n.t('How requests are spread over accounts (now: {0}); applies to the next request', current),
    matchOnDescription: true,
    matchOnDetail: true,
  });
  return picked?.name;
}

async function pickRanking(current: string): Promise<AccountRanking | undefined> {
  const items = (Object.keys(ACCOUNT_RANKINGS) as AccountRanking[]).map((name) => ({
    label: name === current ? `$(check) ${name}` : name,
    name,
    description: name === current ? vscode.l10n.t('current') : undefined,
    detail: plain(ACCOUNT_RANKINGS[name]),
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('Claude Router: fill-first — Account Ranking'),
    placeHolder: vscode.l10n.t('Which account fill-first fills first'),
  });
  return picked?.name;
}

function sayOverridden(key: string, file: string): void {
  void vscode.window
    .showWarningMessage(
      vscode.l10n.t('Claude Router: "{0}" is set in {1} (claudeRouter.configFile), which overrides the setting. Change it there; the router reloads the file.', key, file),
      vscode.l10n.t('Open File'),
    )
    .then((choice) => {
      if (choice) void vscode.window.showTextDocument(vscode.Uri.file(file));
    });
}

/**
 * The command. `strategyArg` (a strategy name) skips the first pick; `rankingArg` (an
 * `account-ranking`) the second — without it, a `fill-first` chosen by argument keeps the ranking.
 */
export async function chooseStrategy(service: RouterService, strategyArg?: unknown, rankingArg?: unknown): Promise<ChooseStrategyResult> {
  const policy = service.routingPolicy;
  const sources = service.routingSources;
  if (strategyArg !== undefined && !isStrategy(strategyArg)) {
    void vscode.window.showErrorMessage(vscode.l10n.t('Claude Router: {0} is not a routing strategy (one of {1}).', shown(strategyArg), STRATEGY_NAMES.join(', ')));
    return { written: false, reason: 'invalid' };
  }
  if (rankingArg !== undefined && !isRanking(rankingArg)) {
    void vscode.window.showErrorMessage(vscode.l10n.t('Claude Router: {0} is not an account ranking (expiry-first or headroom-first).', shown(rankingArg)));
    return { written: false, reason: 'invalid' };
  }
  const strategyFile = overridingFile(sources, 'strategy');
  if (strategyFile) {
    sayOverridden('strategy', strategyFile);
    return { written: false, reason: 'overridden', file: strategyFile };
  }
  const strategy = strategyArg ?? (await pickStrategy(policy?.strategy ?? 'fill-first'));
  if (!strategy) return { written: false, reason: 'cancelled' };
  let accountRanking: AccountRanking | undefined;
  if (strategy === 'fill-first') {
    const rankingFile = overridingFile(sources, 'account-ranking');
    if (rankingFile) {
      if (rankingArg !== undefined || strategyArg === undefined) sayOverridden('account-ranking', rankingFile);
    } else {
      accountRanking = rankingArg ?? (strategyArg === undefined ? await pickRanking(policy?.accountRanking ?? 'expiry-first') : undefined);
      if (strategyArg === undefined && !accountRanking) return { written: false, reason: 'cancelled' };
    }
  }
  const routing = vscode.workspace.getConfiguration('claudeRouter.routing');
  // The ranking first: the strategy's change event then finds both in place.
  if (accountRanking) await routing.update('accountRanking', accountRanking, vscode.ConfigurationTarget.Global);
  await routing.update('strategy', strategy, vscode.ConfigurationTarget.Global);
  return { written: true, strategy, ...(accountRanking ? { accountRanking } : {}) };
}
