/**
 * `claude-router accounts login [--label L]`: "Sign in with Claude" from a terminal — the PKCE
 * copy-code flow of src/accounts/oauthLogin.ts (docs/anthropic-api.md#oauth). It prints the
 * authorize URL, opens the browser when it can, reads the pasted `code#state`, exchanges it at
 * the token endpoint and stores the pair in the state directory's credential store. Signing in
 * to an existing label replaces only its credentials (sign in again).
 */
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { FileCredentialStore } from '../accounts/fileCredentialStore';
import { exchangeCode, startPkceLogin } from '../accounts/oauthLogin';
import { AccountRegistry } from '../accounts/registry';
import { DEFAULT_SERVER_SETTINGS } from '../config/schema';
import { configFromArgs, UsageError, validLabel, type GlobalOptions } from './args';
import { openInBrowser } from './openBrowser';
import { resolveAccounts, seedsCredentials } from './accountSet';
import { stateDirOf } from './runtime';

export interface LoginOptions extends GlobalOptions {
  config?: string;
  label?: string;
  /** False with `--no-browser`: only print the URL. */
  browser: boolean;
  /** The OAuth token endpoint (testing); default the config's `upstream.token-url`. */
  tokenUrl?: string;
}

/**
 * @returns 0 when the account is signed in, 1 when the sign-in failed (nothing pasted, a code of
 * another attempt, the token endpoint refused or unreachable); nothing is stored then
 * @throws UsageError for an invalid `--label`, or one whose tokens the config file holds
 */
export async function runLogin(opts: LoginOptions, input: NodeJS.ReadableStream = process.stdin): Promise<number> {
  const { config, path: configPath } = await configFromArgs(opts.config, opts.stateDir);
  if (opts.label !== undefined && !validLabel(opts.label)) throw new UsageError('--label: 1–64 characters, no control characters, not a reserved name');
  const dir = stateDirOf(config);
  const store = new FileCredentialStore(path.join(dir, 'credentials.json'));
  const registry = new AccountRegistry(path.join(dir, 'accounts.json'));
  const { accounts } = await resolveAccounts(config, registry);
  const known = new Set(accounts.map((a) => a.label));
  const existing = accounts.find((a) => a.label === opts.label);
  const label = opts.label ?? freeLabel(known);
  if (seedsCredentials(config, label)) {
    throw new UsageError(`the tokens of "${label}" are in ${configPath ?? 'the config file'} and would replace a sign-in at its next reload; remove them there first`);
  }
  const tokenUrl = opts.tokenUrl ?? config.upstream?.tokenUrl ?? DEFAULT_SERVER_SETTINGS.tokenUrl;

  const login = startPkceLogin();
  const opened = opts.browser && (await openInBrowser(login.url));
  process.stdout.write(
    `${opened ? 'Your browser opens the sign-in page; if it does not, open' : 'Open'} this URL in a browser and sign in:\n\n  ${login.url}\n\n` +
      'Then paste the code the page shows (code#state) here.\n',
  );
  const pasted = await readLine(input, 'Code: ');
  if (!pasted?.trim()) {
    process.stderr.write('claude-router: nothing pasted; nothing was stored\n');
    return 1;
  }
  let credentials;
  try {
    credentials = await exchangeCode(tokenUrl, login, pasted);
  } catch (err) {
    process.stderr.write(`claude-router: ${(err as Error).message}; nothing was stored\n`);
    return 1;
  }
  // The secret first: an account never exists in the list without its credentials.
  await store.set(label, credentials);
  // A new account, or an API-key account of the state directory that is an OAuth one from now on.
  if (!existing) await registry.upsert({ label, kind: 'oauth', fallback: false, enabled: true });
  else if (existing.kind !== 'oauth' && existing.origin?.account === 'state-dir') {
    await registry.update((d) => {
      for (const a of d.accounts) if (a.label === label) a.kind = 'oauth';
    });
  }
  process.stdout.write(existing ? `signed in again to "${label}"\n` : `signed in; added account "${label}"\n`);
  return 0;
}

/** `account-N` with the smallest N ≥ 1 not taken. */
function freeLabel(taken: ReadonlySet<string>): string {
  for (let n = 1; ; n++) if (!taken.has(`account-${n}`)) return `account-${n}`;
}

/** One line of `input` (after showing `prompt` on a terminal), or undefined when it ends first. */
function readLine(input: NodeJS.ReadableStream, prompt: string): Promise<string | undefined> {
  const tty = (input as { isTTY?: boolean }).isTTY === true;
  const rl = createInterface({ input, output: tty ? process.stderr : undefined, terminal: tty });
  return new Promise((resolve) => {
    let line: string | undefined;
    rl.once('line', (l) => {
      line = l;
      rl.close();
    });
    rl.once('close', () => resolve(line));
    if (tty) {
      rl.setPrompt(prompt);
      rl.prompt();
    }
  });
}
