/**
 * The account model. Metadata (label, kind, fallback, enabled, order) is
 * configuration; credentials live only in a `CredentialStore`.
 */

/** How an account authenticates upstream. */
export type AccountKind = 'oauth' | 'api_key';

/** An account's non-secret description. */
export interface AccountInfo {
  /** Unique, shown everywhere (never a token). */
  label: string;
  kind: AccountKind;
  /** A pay-as-you-go fallback: tried last, never bound. */
  fallback: boolean;
  enabled: boolean;
  /** `priority` (integer, higher first; default 0), read by the `weighted` strategy. */
  priority?: number;
  /** `cost-tier` (1 = cheapest; default 1), read by the `weighted` strategy. */
  costTier?: number;
  /** `plan-size`: the account's allowance relative to the others' (e.g. Pro 1, Max 5x 5, Max 20x 20), read by `capacity-weighted`. */
  planSize?: number;
  /** `warm-up`: send one small request (spending a little quota) when one of its windows has newly reset (docs/routing.md#limit-warm-up). */
  warmUp?: boolean;
  /** Where the account and its settings come from (the CLI's accounts; absent in the extension's). */
  origin?: AccountOrigin;
}

/**
 * Where a CLI account's values come from: `config` (the config file), `state-dir` (set by an
 * `accounts` command, in `<state-dir>/accounts.json`) or `default`. A value the config file sets
 * wins over the state directory's.
 */
export interface AccountOrigin {
  /** Where the account is defined. */
  account: 'config' | 'state-dir';
  /** Where its `enabled` came from. */
  enabled: 'config' | 'state-dir' | 'default';
  /** Where its place in the order came from (`accounts move`: the state directory). */
  position: 'config' | 'state-dir';
}

/** An account's secrets. Never logged, never in `/status`, settings or decisions. */
export interface Credentials {
  /** OAuth access token (`sk-ant-oat01-…`) or API key (`sk-ant-api03-…`). */
  accessToken: string;
  /** OAuth refresh token (`sk-ant-ort01-…`); each refresh replaces it with a new one. */
  refreshToken?: string;
  /** When the access token expires, epoch ms; undefined when unknown (long-lived). */
  expiresAtMs?: number;
  /**
   * When a person signed in for this pair's grant (the OAuth login that began its refresh chain),
   * epoch ms. Kept by every refresh (the chain reportedly ends some 28–29 days after it: grant.ts);
   * undefined when unknown — an imported or pasted token, credentials stored before it was recorded.
   */
  grantedAtMs?: number;
  /** Fingerprint of the config file's copy this credential was seeded from (see seedCredentials). */
  seedFingerprint?: string;
}

/**
 * Where credentials are kept. Implementations must write atomically: a reader
 * sees the old pair or the new pair, never half of one; and a write of one
 * account never undoes a concurrent write of another (not even from another process).
 */
export interface CredentialStore {
  get(label: string): Promise<Credentials | undefined>;
  /** Stores one account's pair. Rejects when it cannot (full disk, no permission, locked): nothing was written then. */
  set(label: string, credentials: Credentials): Promise<void>;
  delete(label: string): Promise<void>;
  labels(): Promise<string[]>;
  /**
   * Present on a store several routers share (src/store/sharedCredentials.ts): runs `run` — re-read
   * the pair, refresh it, store the new one — as the only refresher of `label` among them; the
   * others wait, then re-read and adopt the rotated pair instead of sending a spent refresh token.
   * @throws RefreshError('waiting_for_store') when it cannot be the refresher now (the store is unreachable and another router owns the pair)
   */
  exclusiveRefresh?<T>(label: string, run: () => Promise<T>): Promise<T>;
}
