/**
 * The configuration a request runs under (RuntimeConfig), where it came from
 * (ConfigStatus), and one applied generation of it with what requests derive
 * from it (ConfigGeneration).
 */
import type { AccountInfo } from '../accounts/types';
import type { RoutingPolicy } from '../routing/policy';

/** The configuration a request runs under. Immutable; replaced whole on reload. */
export interface RuntimeConfig {
  policy: Readonly<RoutingPolicy>;
  /** Every account in configured order, enabled or not. */
  accounts: readonly AccountInfo[];
  /** e.g. `https://api.anthropic.com` (no trailing slash). */
  upstreamBaseUrl: string;
}

/** Where the running configuration came from and how its last reload went. */
export interface ConfigStatus {
  generation: number;
  loadedAtMs: number;
  lastReloadError: string | null;
  lastReloadErrorAtMs: number | null;
  /** Where each effective routing value came from (`default`, `settings`, a file path). */
  sources: Record<string, string>;
}

/** One applied configuration and its accounts by label, built once when it is applied. */
export class ConfigGeneration {
  /** Every configured account (enabled or not) by label. */
  readonly accountsByLabel: ReadonlyMap<string, AccountInfo>;

  constructor(readonly config: RuntimeConfig) {
    this.accountsByLabel = new Map(config.accounts.map((a) => [a.label, a]));
  }
}
