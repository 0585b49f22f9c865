/**
 * Settings → runtime configuration for the extension's router: the `claudeRouter.*` settings and
 * the optional `claudeRouter.configFile` (over an optional defaults layer, e.g. the simulated
 * accounts' demo policy) become the RuntimeConfig an engine runs under, with where each routing key
 * came from; an invalid value becomes the error naming its setting.
 */
import type { AccountInfo } from '../accounts/types';
import { loadConfigFile } from '../config/load';
import type { RoutingInput } from '../config/schema';
import { policyFromSettings, type DefaultsLayer } from '../config/settingsPolicy';
import type { RuntimeConfig } from '../proxy/runtimeConfig';
import type { SettingsService } from './settings';

/** A runtime configuration and the source of each routing key, or the error naming the setting. */
export type SettingsRuntime = { config: RuntimeConfig; sources: Record<string, string> } | { error: string };

/** Settings (+ optional config file, over optional `defaults`) → runtime config, or the error naming the setting. */
export async function runtimeFromSettings(settings: SettingsService, accounts: AccountInfo[], defaults?: DefaultsLayer): Promise<SettingsRuntime> {
  const host = settings.host;
  let file: { path: string; routing: RoutingInput | undefined } | undefined;
  if (host.configFile) {
    const loaded = await loadConfigFile(host.configFile);
    if (!loaded.ok) return { error: `claudeRouter.configFile: ${loaded.error}` };
    file = { path: host.configFile, routing: loaded.config.routing };
  }
  const result = policyFromSettings(settings.routing, file, process.env, defaults);
  if (!result.ok) return { error: result.error };
  return {
    config: { policy: result.policy, accounts, upstreamBaseUrl: host.upstreamBaseUrl },
    sources: result.sources,
  };
}

/** The default routing policy (no setting, no config file) over `accounts`: what serves while the settings do not validate at start-up. */
export function defaultRuntime(settings: SettingsService, accounts: AccountInfo[]): RuntimeConfig {
  const result = policyFromSettings({}, undefined, process.env);
  if (!result.ok) throw new Error(result.error);
  return { policy: result.policy, accounts, upstreamBaseUrl: settings.host.upstreamBaseUrl };
}
