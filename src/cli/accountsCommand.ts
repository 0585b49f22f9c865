/**
 * `claude-router accounts list|add|import|remove`: manages accounts kept in
 * the state directory (credentials in the 0600 store, metadata in accounts.json).
 * A running proxy picks the change up at its next reload or restart.
 */
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { AccountRegistry } from '../accounts/registry';
import { FileCredentialStore } from '../accounts/fileCredentialStore';
import { claudeCodeCredentialsPath, readClaudeCodeLogin } from '../accounts/claudeCodeLogin';
import { configFromArgs, UsageError } from './args';
import { resolveAccounts, stateDirOf } from './runtime';
import { RESERVED_LABELS } from '../config/schema';

const LABEL = /^[^\u0000-\u001f\u007f]{1,64}$/;
const validLabel = (l: string) => LABEL.test(l) && l.trim().length > 0 && !RESERVED_LABELS.has(l);

export async function runAccounts(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    strict: true,
    options: {
      config: { type: 'string', short: 'c' },
      label: { type: 'string' },
      'access-token': { type: 'string' },
      'refresh-token': { type: 'string' },
      'expires-at': { type: 'string' },
      'api-key': { type: 'string' },
      fallback: { type: 'boolean' },
      'credentials-file': { type: 'string' },
    },
  });
  const { config } = await configFromArgs(values.config, true);
  const dir = stateDirOf(config);
  const store = new FileCredentialStore(path.join(dir, 'credentials.json'));
  const registry = new AccountRegistry(path.join(dir, 'accounts.json'));

  switch (sub) {
    case 'list': {
      const { accounts } = await resolveAccounts(config, registry);
      const stored = new Set(await store.labels());
      for (const a of accounts) {
        process.stdout.write(
          `${a.label}\t${a.kind}${a.fallback ? ' fallback' : ''}${a.enabled ? '' : ' disabled'}\t${stored.has(a.label) ? 'credentials stored' : 'no credentials stored'}\n`,
        );
      }
      if (accounts.length === 0) process.stdout.write('no accounts\n');
      return 0;
    }
    case 'add': {
      const label = values.label;
      if (!label || !validLabel(label)) throw new UsageError('--label <name> is required (1–64 characters, no control characters)');
      const token = values['api-key'] ?? values['access-token'];
      if (!token || (values['api-key'] && values['access-token'])) throw new UsageError('give exactly one of --access-token or --api-key');
      let expiresAtMs: number | undefined;
      if (values['expires-at'] !== undefined) {
        const v = values['expires-at'];
        expiresAtMs = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
        if (!Number.isFinite(expiresAtMs)) throw new UsageError('--expires-at: expected ISO-8601 or epoch milliseconds');
      }
      await store.set(label, { accessToken: token, refreshToken: values['refresh-token'], expiresAtMs });
      await registry.upsert({ label, kind: values['api-key'] ? 'api_key' : 'oauth', fallback: values.fallback ?? false, enabled: true });
      process.stdout.write(`added account "${label}"\n`);
      return 0;
    }
    case 'import': {
      const file = values['credentials-file'] ?? claudeCodeCredentialsPath();
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
      const removed = await registry.remove(label);
      await store.delete(label);
      if (!removed && (config.accounts ?? []).some((a) => a.label === label)) {
        process.stdout.write(`"${label}" is defined in the config file; remove it there too\n`);
      }
      process.stdout.write(`removed account "${label}"\n`);
      return 0;
    }
    default:
      throw new UsageError('accounts list|add|import|remove');
  }
}
