/**
 * `claude-router accounts rename|enable|disable|move|primary|logout`: settings kept in the state
 * directory (`accounts.json`, credentials in the 0600 store). A value the config file sets wins,
 * so a command that would change one is refused (exit 2) with the file to change instead;
 * nothing is written then. A running proxy picks every change up within a second (stateWatch.ts).
 */
import * as path from 'node:path';
import { FileCredentialStore } from '../accounts/fileCredentialStore';
import { AccountRegistry } from '../accounts/registry';
import type { AccountInfo } from '../accounts/types';
import { resolveAccounts, seedsCredentials } from './accountSet';
import { configFromArgs, UsageError, validLabel, type GlobalOptions } from './args';
import { stateDirOf } from './runtime';

/** The edits, by subcommand name. */
export type AccountEdit = 'rename' | 'enable' | 'disable' | 'move' | 'primary' | 'logout';

export interface AccountEditOptions extends GlobalOptions {
  config?: string;
  /** `primary --clear`. */
  clear?: boolean;
}

/**
 * Runs one edit; `args` are its positional arguments (rename: OLD NEW; move: LABEL POSITION; the
 * others: LABEL).
 * @returns 0 (a refusal throws)
 * @throws UsageError (exit 2) naming the account or the file when the edit cannot be made
 */
export async function runAccountEdit(edit: AccountEdit, opts: AccountEditOptions, args: string[]): Promise<number> {
  const { config, path: configPath } = await configFromArgs(opts.config, opts.stateDir);
  const dir = stateDirOf(config);
  const store = new FileCredentialStore(path.join(dir, 'credentials.json'));
  const registry = new AccountRegistry(path.join(dir, 'accounts.json'));
  const { accounts } = await resolveAccounts(config, registry);
  const file = configPath ?? 'the config file';
  const account = (label: string | undefined): AccountInfo => {
    const found = accounts.find((a) => a.label === label);
    if (!found) throw new UsageError(`no account "${label}"; \`claude-router accounts list\` shows them`);
    return found;
  };
  const say = (line: string) => process.stdout.write(`${line}\n`);

  switch (edit) {
    case 'rename': {
      const [from, to] = args;
      const a = account(from);
      if (a.origin?.account === 'config') throw new UsageError(`"${from}" is defined in ${file}; rename it there`);
      if (!validLabel(to)) throw new UsageError('the new name: 1–64 characters, no control characters, not a reserved name');
      if (accounts.some((x) => x.label === to)) throw new UsageError(`an account "${to}" exists already`);
      // The credentials under the new name first: a failure in between leaves a copy, never a loss.
      const creds = await store.get(from);
      if (creds) await store.set(to, creds);
      await registry.update((d) => {
        d.accounts = d.accounts.map((x) => (x.label === from ? { ...x, label: to } : x));
        if (d.order) d.order = d.order.map((l) => (l === from ? to : l));
        if (d.primaryAccount === from) d.primaryAccount = to;
      });
      if (creds) await store.delete(from);
      say(`renamed "${from}" to "${to}"`);
      if (config.routing?.primaryAccount === from) say(`warning: ${file} names "${from}" as routing.primary-account; change it there too`);
      return 0;
    }
    case 'enable':
    case 'disable': {
      const enabled = edit === 'enable';
      const a = account(args[0]);
      const inFile = (config.accounts ?? []).find((x) => x.label === a.label);
      if (inFile?.enabled !== undefined && inFile.enabled !== enabled) {
        throw new UsageError(`${file} sets enabled: ${inFile.enabled} for "${a.label}", which wins over the state directory; change it there`);
      }
      await registry.update((d) => {
        const own = d.accounts.find((x) => x.label === a.label);
        if (own) own.enabled = enabled;
        else d.overrides[a.label] = { ...d.overrides[a.label], enabled };
      });
      say(`${edit}d "${a.label}"`);
      return 0;
    }
    case 'move': {
      const [label, position] = args;
      account(label);
      const order = accounts.map((a) => a.label).filter((l) => l !== label);
      const at = targetIndex(
        position,
        accounts.findIndex((a) => a.label === label),
        accounts.length,
      );
      order.splice(at, 0, label);
      await registry.update((d) => {
        d.order = order;
      });
      say(`order: ${order.map((l, i) => `${i + 1}. ${l}`).join('  ')}`);
      return 0;
    }
    case 'primary': {
      if (config.routing?.primaryAccount !== undefined) {
        throw new UsageError(`${file} sets routing.primary-account ("${config.routing.primaryAccount}"), which wins over the state directory; change it there`);
      }
      if (!opts.clear && args[0] === undefined) throw new UsageError('accounts primary <label>, or --clear');
      const chosen = opts.clear ? undefined : account(args[0]);
      const label = chosen?.label;
      await registry.update((d) => {
        if (label === undefined) delete d.primaryAccount;
        else d.primaryAccount = label;
      });
      say(label === undefined ? 'no primary account' : `primary account: "${label}"`);
      if (chosen && !chosen.enabled) process.stderr.write(`warning: "${label}" is disabled: it serves as the primary once enabled (claude-router accounts enable ${label})\n`);
      return 0;
    }
    case 'logout': {
      const a = account(args[0]);
      if (seedsCredentials(config, a.label)) {
        throw new UsageError(`the tokens of "${a.label}" are in ${file} and would be stored again at its next reload; remove them there`);
      }
      await store.delete(a.label);
      say(`signed out of "${a.label}": its credentials are deleted (\`claude-router accounts login --label ${a.label}\` signs in again)`);
      return 0;
    }
  }
}

/**
 * The 0-based index a `move` puts the account at, among the others.
 * @param position `up`, `down`, `first`, `last` or a 1-based position
 * @throws UsageError for anything else, or a position out of range
 */
function targetIndex(position: string, from: number, count: number): number {
  switch (position) {
    case 'up':
      return Math.max(0, from - 1);
    case 'down':
      return Math.min(count - 1, from + 1);
    case 'first':
      return 0;
    case 'last':
      return count - 1;
  }
  const n = Number(position);
  if (!Number.isInteger(n) || n < 1 || n > count) throw new UsageError(`position: expected up, down, first, last or 1–${count}, got "${position}"`);
  return n - 1;
}
