/**
 * Where the running proxy is and the key to talk to it, for the commands that ask it something
 * (`status`, `accounts reset-cooldown`): the key from `--key`, `CLAUDE_ROUTER_KEY`, the config file
 * or the state directory; the URL from `--url`, the state directory's runtime file, or the
 * configured listen address.
 */
import { DEFAULT_SERVER_SETTINGS } from '../config/schema';
import { configFromArgs, UsageError } from './args';
import { stateDirOf } from './runtime';
import { readClientKey, runningProxyUrl } from './stateDir';

/** The options these commands share. */
export interface ProxyTarget {
  config?: string;
  url?: string;
  key?: string;
}

/**
 * The running proxy's URL and client key. Reading never creates a key: a missing one means the
 * wrong state directory.
 * @throws UsageError when no key is found (naming the state directory), or the config file is invalid
 */
export async function runningProxy(values: ProxyTarget): Promise<{ url: string; key: string }> {
  const { config } = await configFromArgs(values.config);
  const dir = stateDirOf(config);
  const key = values.key ?? process.env.CLAUDE_ROUTER_KEY ?? config.clientKey ?? readClientKey(dir);
  if (!key) throw new UsageError(`no client key in ${dir}; pass --config <file> of the running proxy, or set CLAUDE_ROUTER_KEY`);
  const host = config.listen?.host ?? DEFAULT_SERVER_SETTINGS.host;
  const url = values.url ?? runningProxyUrl(dir) ?? `http://${host.includes(':') ? `[${host}]` : host}:${config.listen?.port ?? DEFAULT_SERVER_SETTINGS.port}`;
  return { url, key };
}
