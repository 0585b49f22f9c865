/**
 * VS Code settings (`claudeRouter.routing.*`) and an optional
 * `proxy-config.yaml` → one validated routing policy, with where each value
 * came from. The same zod schema as the YAML loader validates both, because
 * the Settings UI does not stop anyone typing bad JSON.
 */
import { configSchema, DEFAULT_SERVER_SETTINGS, routingSchema, policyFrom, type RoutingInput } from './schema';
import type { z } from 'zod';
import { camelToKebab } from './keys';
import { formatIssues } from './load';
import type { RoutingPolicy } from '../routing/policy';

/** The routing keys, as settings (`claudeRouter.routing.<key>`). */
export const ROUTING_SETTING_KEYS = Object.keys(routingSchema.shape) as Array<keyof RoutingInput>;

export type SettingsPolicyResult = { ok: true; policy: Readonly<RoutingPolicy>; sources: Record<string, string> } | { ok: false; error: string };

/** Values under the user's settings, named as their source (the simulated accounts' demo policy). */
export interface DefaultsLayer {
  values: RoutingInput;
  /** Shown as the source of the values it decides, e.g. `simulated accounts' demo default`. */
  source: string;
}

/**
 * @param userValues routing values the user set in settings (unset keys absent), camelCase keys
 * @param file routing values from `claudeRouter.configFile`, which override settings
 * @param env for `CLAUDE_ROUTER_QUOTA_ROUTING`
 * @param defaults values the settings and the file override (absent: the built-in defaults only)
 */
export function policyFromSettings(
  userValues: Record<string, unknown>,
  file: { path: string; routing: RoutingInput | undefined } | undefined,
  env: NodeJS.ProcessEnv,
  defaults?: DefaultsLayer,
): SettingsPolicyResult {
  const cleaned = { ...userValues };
  // An empty primary (or pinned account) in the Settings UI means "none".
  if (cleaned.primaryAccount === '') delete cleaned.primaryAccount;
  if (cleaned.singleAccountLabel === '') delete cleaned.singleAccountLabel;
  // An empty sticky threshold (null, the settings' default) means "off".
  if (cleaned.stickyThreshold5h === null) delete cleaned.stickyThreshold5h;
  if (cleaned.stickyThreshold7d === null) delete cleaned.stickyThreshold7d;
  const parsed = routingSchema.safeParse(cleaned);
  if (!parsed.success) return { ok: false, error: formatIssues(parsed.error.issues, 'claudeRouter.routing', 'camel') };
  const merged: RoutingInput = { ...stripUndefined(defaults?.values ?? {}), ...stripUndefined(parsed.data), ...stripUndefined(file?.routing ?? {}) };
  const sources: Record<string, string> = {};
  const policy = policyFrom(merged, env);
  for (const k of Object.keys(policy)) {
    const kebab = camelToKebab(k);
    if (file?.routing && (file.routing as Record<string, unknown>)[k] !== undefined) sources[kebab] = file.path;
    else if (parsed.data[k as keyof RoutingInput] !== undefined) sources[kebab] = `setting claudeRouter.routing.${k}`;
    else if (defaults && (defaults.values as Record<string, unknown>)[k] !== undefined) sources[kebab] = defaults.source;
    else sources[kebab] = 'default';
  }
  if (!policy.quotaRouting) sources['quota-routing'] = 'env CLAUDE_ROUTER_QUOTA_ROUTING';
  return { ok: true, policy, sources };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The extension's non-routing settings, effective values. */
export interface HostSettingsValues {
  port: number;
  /** No trailing slash. */
  upstreamBaseUrl: string;
  tokenUrl: string;
}

const listenFields = configSchema.shape.listen.unwrap().shape;
const upstreamFields = configSchema.shape.upstream.unwrap().shape;

/**
 * Validates `claudeRouter.port`, `.upstreamBaseUrl` and `.tokenUrl` with the YAML schema's
 * fields (`listen.port`, `upstream.*`); an unset, empty or invalid value gets the default,
 * and the invalid ones are named.
 * @param values as read from settings (undefined = unset)
 * @returns the effective values and the errors, one line per setting (null when none)
 */
export function hostSettingsFrom(values: Partial<Record<keyof HostSettingsValues, unknown>>): { settings: HostSettingsValues; error: string | null } {
  const errors: string[] = [];
  const valid = <T>(key: keyof HostSettingsValues, schema: z.ZodType<T | undefined>, fallback: T): T => {
    const value = values[key];
    if (value === undefined || value === '') return fallback;
    const parsed = schema.safeParse(value);
    if (!parsed.success) errors.push(formatIssues(parsed.error.issues, `claudeRouter.${key}`, 'camel'));
    return parsed.success && parsed.data !== undefined ? parsed.data : fallback;
  };
  const settings: HostSettingsValues = {
    port: valid('port', listenFields.port, DEFAULT_SERVER_SETTINGS.port),
    upstreamBaseUrl: valid('upstreamBaseUrl', upstreamFields.baseUrl, DEFAULT_SERVER_SETTINGS.upstreamBaseUrl).replace(/\/+$/, ''),
    tokenUrl: valid('tokenUrl', upstreamFields.tokenUrl, DEFAULT_SERVER_SETTINGS.tokenUrl),
  };
  return { settings, error: errors.length ? errors.join('\n') : null };
}
