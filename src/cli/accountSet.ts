/**
 * The accounts a CLI proxy runs: those of the config file, then those added by command, with the
 * state directory's settings (`accounts enable|disable|move|primary`) applied where the config
 * file sets no value of its own, and where each value came from.
 */
import type { AccountRegistry, RegistryData } from '../accounts/registry';
import type { SeedCredential } from '../accounts/seed';
import type { AccountInfo } from '../accounts/types';
import type { ConfigInput, RoutingInput } from '../config/schema';

/** The effective account set. */
export interface AccountSet {
  /** Every account in effective order, each with its `origin`. */
  accounts: AccountInfo[];
  /** The config file's credentials, to seed the credential store with. */
  seeds: SeedCredential[];
  /** The primary set by `accounts primary`, when the config file sets none. */
  statePrimary: string | undefined;
}

/**
 * Config-file accounts (in their order) then accounts added by command (in theirs), reordered by
 * the state directory's `order` (its labels first, in its order; the rest after, as before).
 * @throws Error naming `accounts.json` when it cannot be read or is malformed
 */
export async function resolveAccounts(config: ConfigInput, registry: AccountRegistry): Promise<AccountSet> {
  return accountSetOf(config, await registry.read());
}

/** {@link resolveAccounts} on registry data already read. */
export function accountSetOf(config: ConfigInput, stored: RegistryData): AccountSet {
  const accounts: AccountInfo[] = [];
  const seeds: SeedCredential[] = [];
  for (const a of config.accounts ?? []) {
    const kind = a.apiKey ? 'api_key' : 'oauth';
    const override = Object.prototype.hasOwnProperty.call(stored.overrides, a.label) ? stored.overrides[a.label].enabled : undefined;
    const enabled = a.enabled ?? override ?? true;
    const info: AccountInfo = {
      label: a.label,
      kind,
      fallback: a.fallback ?? false,
      enabled,
      origin: { account: 'config', enabled: a.enabled !== undefined ? 'config' : override !== undefined ? 'state-dir' : 'default', position: 'config' },
    };
    if (a.priority !== undefined) info.priority = a.priority;
    if (a.costTier !== undefined) info.costTier = a.costTier;
    if (a.planSize !== undefined) info.planSize = a.planSize;
    if (a.warmUp !== undefined) info.warmUp = a.warmUp;
    accounts.push(info);
    const token = a.apiKey ?? a.accessToken;
    if (token) seeds.push({ label: a.label, accessToken: token, refreshToken: a.refreshToken, expiresAtMs: a.expiresAt });
  }
  const inConfig = new Set(accounts.map((a) => a.label));
  for (const a of stored.accounts) {
    if (!inConfig.has(a.label)) accounts.push({ ...a, origin: { account: 'state-dir', enabled: 'state-dir', position: 'state-dir' } });
  }
  const statePrimary = config.routing?.primaryAccount === undefined ? stored.primaryAccount : undefined;
  return { accounts: ordered(accounts, stored.order), seeds, statePrimary };
}

/** `accounts` with the labels of `order` first, in its order, each marked as placed by the state directory. */
function ordered(accounts: AccountInfo[], order: readonly string[] | undefined): AccountInfo[] {
  if (!order?.length) return accounts;
  const rank = new Map(order.map((l, i) => [l, i]));
  const placed = accounts.filter((a) => rank.has(a.label)).sort((a, b) => rank.get(a.label)! - rank.get(b.label)!);
  return [...placed.map((a) => ({ ...a, origin: { ...a.origin!, position: 'state-dir' as const } })), ...accounts.filter((a) => !rank.has(a.label))];
}

/**
 * Whether the config file holds a token for `label`: it seeds the credential store, and stores it
 * again at a reload over a pair put there by `accounts login` or removed by `accounts logout`.
 */
export function seedsCredentials(config: ConfigInput, label: string): boolean {
  const a = (config.accounts ?? []).find((x) => x.label === label);
  return a !== undefined && (a.accessToken !== undefined || a.apiKey !== undefined);
}

/** The config file's `routing:` with the state directory's primary when the file sets none. */
export function routingInputOf(config: ConfigInput, set: AccountSet): RoutingInput | undefined {
  return set.statePrimary === undefined ? config.routing : { ...config.routing, primaryAccount: set.statePrimary };
}

/** What changed between two account lists, in words for the log ("added work", "disabled personal"); empty when nothing did. */
export function accountChanges(prev: readonly AccountInfo[], next: readonly AccountInfo[]): string[] {
  const before = new Map(prev.map((a) => [a.label, a]));
  const after = new Map(next.map((a) => [a.label, a]));
  const out: string[] = [];
  for (const a of next) {
    const old = before.get(a.label);
    if (!old) out.push(`added "${a.label}"`);
    else if (old.enabled !== a.enabled) out.push(`${a.enabled ? 'enabled' : 'disabled'} "${a.label}"`);
  }
  for (const a of prev) if (!after.has(a.label)) out.push(`removed "${a.label}"`);
  const kept = (list: readonly AccountInfo[], other: Map<string, AccountInfo>) => list.filter((a) => other.has(a.label)).map((a) => a.label);
  const order = kept(next, before);
  if (order.join('\n') !== kept(prev, after).join('\n')) out.push(`order now ${order.map((l) => `"${l}"`).join(', ')}`);
  return out;
}
