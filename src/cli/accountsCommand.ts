/**
 * `claude-router accounts list|add|import|remove`: manages accounts kept in
 * the state directory (credentials in the 0600 store, metadata in accounts.json).
 * A running proxy picks the change up within a second (stateWatch.ts). `add` takes its
 * secrets from standard input, a file or an environment variable (secretInput.ts).
 */
import * as path from 'node:path';
import { AccountRegistry } from '../accounts/registry';
import type { AccountKind } from '../accounts/types';
import { credentialShape } from '../accounts/credentialShape';
import { FileCredentialStore } from '../accounts/fileCredentialStore';
import { claudeCodeCredentialsPath, readClaudeCodeLogin } from '../accounts/claudeCodeLogin';
import { configFromArgs, UsageError, validLabel, type GlobalOptions } from './args';
import { resolveAccounts } from './accountSet';
import { stateDirOf } from './runtime';
import { commandLineWarning, readSecret, readStdinLines, secretSource, type SecretOption, type SecretSource } from './secretInput';

/** The options of the `accounts` subcommands (each takes its own subset). */
export interface AccountsOptions extends GlobalOptions {
  config?: string;
  label?: string;
  accessToken?: string;
  accessTokenFile?: string;
  refreshToken?: string;
  refreshTokenFile?: string;
  expiresAt?: string;
  apiKey?: string;
  apiKeyFile?: string;
  fallback?: boolean;
  /** `accounts add`: replace the credentials of an existing account of that label. */
  replace?: boolean;
  credentialsFile?: string;
  json?: boolean;
}

/** One account as `accounts list --json` prints it: never a token. */
export interface ListedAccount {
  label: string;
  kind: AccountKind;
  enabled: boolean;
  fallback: boolean;
  /** Where the account is defined: the config file, or the state directory (added by command). */
  source: 'config' | 'state-dir';
  credentialsStored: boolean;
  /** The primary account (`routing.primary-account`, else `accounts primary`). */
  primary: boolean;
}

export async function runAccounts(sub: 'list' | 'add' | 'import' | 'remove', values: AccountsOptions, positionals: string[]): Promise<number> {
  const { config } = await configFromArgs(values.config, values.stateDir);
  const dir = stateDirOf(config);
  const store = new FileCredentialStore(path.join(dir, 'credentials.json'));
  const registry = new AccountRegistry(path.join(dir, 'accounts.json'));

  switch (sub) {
    case 'list': {
      const { accounts, statePrimary } = await resolveAccounts(config, registry);
      const stored = new Set(await store.labels());
      const primary = config.routing?.primaryAccount ?? statePrimary;
      if (values.json) {
        const inConfig = new Set((config.accounts ?? []).map((a) => a.label));
        const listed: ListedAccount[] = accounts.map((a) => ({
          label: a.label,
          kind: a.kind,
          enabled: a.enabled,
          fallback: a.fallback,
          source: inConfig.has(a.label) ? 'config' : 'state-dir',
          credentialsStored: stored.has(a.label),
          primary: a.label === primary,
        }));
        process.stdout.write(JSON.stringify({ stateDir: dir, accounts: listed }, null, 2) + '\n');
        return 0;
      }
      for (const a of accounts) {
        process.stdout.write(
          `${a.label}\t${a.kind}${a.label === primary ? ' primary' : ''}${a.fallback ? ' fallback' : ''}${a.enabled ? '' : ' disabled'}\t${stored.has(a.label) ? 'credentials stored' : 'no credentials stored'}\n`,
        );
      }
      if (accounts.length === 0) process.stdout.write('no accounts\n');
      return 0;
    }
    case 'add': {
      const label = values.label;
      if (!label || !validLabel(label)) throw new UsageError('--label <name> is required (1–64 characters, no control characters)');
      let expiresAtMs: number | undefined;
      if (values.expiresAt !== undefined) {
        const v = values.expiresAt;
        expiresAtMs = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
        if (!Number.isFinite(expiresAtMs)) throw new UsageError('--expires-at: expected ISO-8601 or epoch milliseconds');
      }
      const inConfig = (config.accounts ?? []).some((a) => a.label === label);
      const prev = (await registry.list()).find((a) => a.label === label);
      const exists = inConfig || prev !== undefined;
      if (exists && !values.replace) {
        throw new UsageError(`an account "${label}" exists; --replace replaces its credentials (its refresh token too), or choose another --label`);
      }
      const { kind, accessToken, refreshToken } = await secretsToAdd(
        { flag: '--access-token', value: values.accessToken, file: values.accessTokenFile, envVar: 'CLAUDE_ROUTER_ACCESS_TOKEN' },
        { flag: '--refresh-token', value: values.refreshToken, file: values.refreshTokenFile, envVar: 'CLAUDE_ROUTER_REFRESH_TOKEN' },
        { flag: '--api-key', value: values.apiKey, file: values.apiKeyFile, envVar: 'CLAUDE_ROUTER_API_KEY' },
      );
      await store.set(label, { accessToken, refreshToken, expiresAtMs });
      // An API key is billed per token: like the extension's Add Account from Token, it serves only as a fallback unless told otherwise.
      // A replaced account keeps its settings (enabled, fallback) unless its kind changed; the config file's accounts keep theirs there.
      const fallback = values.fallback ?? (prev && prev.kind === kind ? prev.fallback : kind === 'api_key');
      if (!inConfig) await registry.upsert({ ...prev, label, kind, fallback, enabled: prev?.enabled ?? true });
      process.stdout.write(
        `${exists ? 'replaced the credentials of' : 'added'} ${kind === 'api_key' ? 'API-key ' : ''}account "${label}"${fallback ? ' (a fallback: used only when no other account can serve)' : ''}\n`,
      );
      return 0;
    }
    case 'import': {
      const file = values.credentialsFile ?? claudeCodeCredentialsPath();
      const login = await readClaudeCodeLogin(file);
      const label = values.label ?? `claude-code${login.subscriptionType ? `-${login.subscriptionType}` : ''}`;
      if (!validLabel(label)) throw new UsageError('--label: 1–64 characters, no control characters');
      await store.set(label, { accessToken: login.accessToken, refreshToken: login.refreshToken, expiresAtMs: login.expiresAtMs });
      await registry.upsert({ label, kind: 'oauth', fallback: false, enabled: true });
      process.stdout.write(
        `imported Claude Code's login as "${label}".\n` +
          'warning: Claude Code and the router now share one refresh token; when either refreshes it, the other must sign in again.\n' +
          '         A dedicated login per pooled account avoids this.\n',
      );
      return 0;
    }
    case 'remove': {
      const label = positionals[0] ?? values.label;
      if (!label) throw new UsageError('accounts remove <label>');
      const inConfig = (config.accounts ?? []).some((a) => a.label === label);
      if (!inConfig && !(await registry.list()).some((a) => a.label === label)) throw new UsageError(`no account "${label}"; \`claude-router accounts list\` shows them`);
      const removed = await registry.remove(label);
      await store.delete(label);
      if (!removed && inConfig) {
        process.stdout.write(`"${label}" is defined in the config file; remove it there too\n`);
      }
      process.stdout.write(`removed account "${label}"\n`);
      return 0;
    }
  }
}

/**
 * The secrets of `accounts add`: the access token (or API key) and the optional refresh token,
 * each from its flag (a literal value warns; `-` reads standard input), its `-file` option or
 * its environment variable. With none of these for the access token or API key, standard input
 * (when it is not a terminal) carries the access token on its first line and, optionally, the
 * refresh token on its second. Lines of standard input go to the secrets that read it in the
 * order access token (or API key), refresh token. A piped secret that starts `sk-ant-api` is an
 * API key (credentialShape.ts).
 * @throws UsageError when no secret, both an access token and an API key, a secret whose prefix
 *   contradicts its option, or an API key with a refresh token are given
 */
async function secretsToAdd(
  access: SecretOption,
  refresh: SecretOption,
  apiKey: SecretOption,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ kind: 'oauth' | 'api_key'; accessToken: string; refreshToken: string | undefined }> {
  const explicit = (src: SecretSource) => src === 'flag' || src === 'stdin' || src === 'file';
  const accessSrc = secretSource(access, env);
  const keySrc = secretSource(apiKey, env);
  const refreshSrc = secretSource(refresh, env);
  if (explicit(accessSrc) && explicit(keySrc)) throw new UsageError('give an access token or an API key, not both');
  if (!explicit(accessSrc) && !explicit(keySrc) && accessSrc === 'env' && keySrc === 'env') {
    throw new UsageError(`both ${access.envVar} and ${apiKey.envVar} are set; unset one`);
  }
  const isKey = explicit(keySrc) || (!explicit(accessSrc) && keySrc === 'env');
  const main = isKey ? apiKey : access;
  const given = isKey ? keySrc : accessSrc;
  const fromStdin = given === 'none';
  if (fromStdin && process.stdin.isTTY) {
    throw new UsageError(`no ${isKey ? 'API key' : 'access token'}: pipe it on standard input (the refresh token on a second line), or use ${main.flag}-file or ${main.envVar}`);
  }
  const mainSrc = given === 'none' ? 'stdin' : given;
  const lines = mainSrc === 'stdin' || refreshSrc === 'stdin' ? await readStdinLines() : [];
  const take = (what: string): string => {
    const line = lines.shift();
    if (line === undefined) throw new UsageError(`standard input: no ${what}`);
    return line;
  };
  for (const [o, src] of [
    [main, mainSrc],
    [refresh, refreshSrc],
  ] as const) {
    if (src === 'flag') process.stderr.write(commandLineWarning(o.flag, o.envVar));
  }
  const secret = mainSrc === 'stdin' ? take(isKey ? 'API key' : 'access token') : await readSecret(main, mainSrc, env);
  let refreshToken: string | undefined;
  if (refreshSrc === 'stdin') refreshToken = take('refresh token');
  else if (refreshSrc !== 'none') refreshToken = await readSecret(refresh, refreshSrc, env);
  // Piped with no option at all: an optional second line is the refresh token.
  else if (fromStdin) refreshToken = lines.shift();
  // The secret's prefix decides what a piped secret is, and refuses one given as the other kind.
  const shape = credentialShape(secret);
  const where = fromStdin ? 'standard input' : `${main.flag}${mainSrc === 'file' ? '-file' : mainSrc === 'env' ? ` (${main.envVar})` : ''}`;
  if (isKey && (shape === 'oauth' || shape === 'refresh'))
    throw new UsageError(`${where}: that is an OAuth token (sk-ant-${secret.trim().slice(7, 10)}…), not an API key; give it as the access token`);
  if (!isKey && !fromStdin && shape === 'api_key')
    throw new UsageError(`${where}: that is an API key (sk-ant-api…), not an access token; give it with --api-key, --api-key-file or ${apiKey.envVar}`);
  if (shape === 'refresh') throw new UsageError(`${where}: that is a refresh token (sk-ant-ort…); the access token comes first, the refresh token on the second line`);
  const kind = isKey || shape === 'api_key' ? 'api_key' : 'oauth';
  if (kind === 'api_key' && refreshToken) throw new UsageError('an API key takes no refresh token: give the key alone');
  return { kind, accessToken: secret, refreshToken };
}
