/**
 * How the client commands (`status`, `decisions`, `explain`) reach a running proxy: its URL and
 * client key without flags, through the discovery file (discovery.ts); then one request, the key
 * sent only to a holder of the port that proved it knows it (src/proxy/http/identity.ts).
 */
import { DEFAULT_SERVER_SETTINGS, type ConfigInput } from '../config/schema';
import { fetchFromRouter } from '../proxy/http/identity';
import { configFromArgs, UsageError, type GlobalOptions } from './args';
import { findRunningProxy } from './discovery';
import { stateDirOf } from './runtime';
import { commandLineWarning } from './secretInput';
import { clientKeyFile, readClientKey } from './stateDir';

/** The options every client command takes. */
export interface ProxyTargetOptions extends GlobalOptions {
  config?: string;
  /** `--url`: the proxy to ask instead of the discovered one. */
  url?: string;
  /** `--key`: the client key as a flag value (warns: visible to other local users). */
  key?: string;
}

/** A running proxy and the key to ask it with. */
export interface ProxyTarget {
  url: string;
  key: string;
  /** The file the key was read from (`<state-dir>/client-key`); undefined when it came from `--key`, `CLAUDE_ROUTER_KEY` or the config. */
  keyFile?: string;
  /** Whether `url` is the one a running proxy registered (false: `--url`, or the config's `listen`). */
  registered?: boolean;
}

/**
 * The proxy to ask and its key. URL: `--url`, else the proxy registered in the state directory,
 * else the config's `listen`. Key: `--key` (warns), `CLAUDE_ROUTER_KEY`, the config's
 * `client-key`, the key file of the registered proxy's state directory, the state directory's.
 * @throws UsageError when no key is found (exit 2)
 */
export async function proxyTarget(values: ProxyTargetOptions, env: NodeJS.ProcessEnv = process.env): Promise<ProxyTarget> {
  if (values.url !== undefined && !isHttpUrl(values.url)) throw new UsageError(`--url: expected the proxy's http:// URL (e.g. http://127.0.0.1:48290), got "${values.url}"`);
  const { config } = await configFromArgs(values.config, values.stateDir);
  return targetOf(values, config, env);
}

/**
 * {@link proxyTarget} with the configuration already resolved (from `values.config` and `values.stateDir`).
 * @throws UsageError for a malformed `--url`, or when no key is found (exit 2)
 */
export function targetOf(values: ProxyTargetOptions, config: ConfigInput, env: NodeJS.ProcessEnv = process.env): ProxyTarget {
  if (values.url !== undefined && !isHttpUrl(values.url)) throw new UsageError(`--url: expected the proxy's http:// URL (e.g. http://127.0.0.1:48290), got "${values.url}"`);
  const dir = stateDirOf(config, env);
  const running = values.url === undefined ? findRunningProxy(dir) : undefined;
  if (values.key !== undefined) {
    process.stderr.write(commandLineWarning('--key', 'CLAUDE_ROUTER_KEY', 'set CLAUDE_ROUTER_KEY instead, or let the command read the key from the state directory'));
  }
  // Reading never creates a key: a missing one means the wrong state directory.
  const given = values.key ?? (env.CLAUDE_ROUTER_KEY || undefined) ?? config.clientKey;
  const keyDir = given === undefined ? [running?.stateDir, dir].find((d) => d !== undefined && readClientKey(d) !== undefined) : undefined;
  const key = given ?? (keyDir !== undefined ? readClientKey(keyDir) : undefined);
  if (!key) throw new UsageError(`no client key in ${dir} and no proxy registered there; pass --state-dir or --config of the running proxy, or set CLAUDE_ROUTER_KEY`);
  const host = config.listen?.host ?? DEFAULT_SERVER_SETTINGS.host;
  const url = values.url ?? running?.url ?? `http://${host.includes(':') ? `[${host}]` : host}:${config.listen?.port ?? DEFAULT_SERVER_SETTINGS.port}`;
  return { url, key, keyFile: keyDir !== undefined ? clientKeyFile(keyDir) : undefined, registered: values.url === undefined && running !== undefined };
}

function isHttpUrl(text: string): boolean {
  try {
    return new URL(text).protocol === 'http:';
  } catch {
    return false;
  }
}

/**
 * `GET <path>` of the proxy, parsed as JSON.
 * @throws Error (exit 1) when nothing listens there, the holder of the port cannot prove it is
 * the router (it got no key), or the answer is not a 200
 */
export async function getJson<T>(target: ProxyTarget, path: string): Promise<T> {
  return (await get<T>(target, path)).json;
}

/**
 * One page of a paged endpoint (`/decisions`): its records and the path of the next page, from
 * its `link: <path>; rel="next"` header.
 * @throws Error as {@link getJson}
 */
export async function fetchPage<T>(target: ProxyTarget, path: string): Promise<{ records: T[]; next: string | null }> {
  const { json, headers } = await get<T[]>(target, path);
  const link = /^<(\/[^>]*)>; rel="next"$/.exec(String(headers.link ?? ''));
  return { records: json, next: link ? link[1] : null };
}

async function get<T>(target: ProxyTarget, path: string): Promise<{ json: T; headers: Record<string, string | string[] | undefined> }> {
  const [res] = await fetchFromRouter(target.url, target.key, [path], { timeoutMs: 5_000 });
  if (res.statusCode !== 200) throw new Error(`${target.url}${path.split('?')[0]} answered ${res.statusCode}: ${res.text}`);
  return { json: JSON.parse(res.text) as T, headers: res.headers };
}
