/**
 * The `accounts` subcommands' definitions: options, help and examples. Each command's work is in
 * its own module (accountsCommand.ts, loginCommand.ts, accountEdits.ts); a new subcommand is one
 * more `register…(accounts, done)` line in main.ts or one more definition here.
 */
import type { Command } from 'commander';
import { runAccountEdit, type AccountEdit, type AccountEditOptions } from './accountEdits';
import { runAccounts, type AccountsOptions } from './accountsCommand';
import { configOption, example } from './help';
import { runLogin, type LoginOptions } from './loginCommand';

/** The options of a command with the global ones (`--state-dir`, `--no-color`). */
const withGlobals = <T>(cmd: Command): T => cmd.optsWithGlobals<T & Record<string, unknown>>();

/** Adds `login`, `list`, `add`, `import`, `remove` and the edits to `accounts`; `done(code)` receives the exit code. */
export function registerAccountCommands(accounts: Command, done: (code: number) => void): void {
  accounts
    .command('login')
    .summary('sign in with Claude in the browser and add (or sign in again to) an account')
    .description(
      'Sign in with Claude: prints the sign-in URL and opens the browser when it can ($BROWSER, else the system opener); paste the code#state the page shows. The token pair goes to the state directory’s 0600 credential store. An existing label keeps its settings and gets the new credentials.',
    )
    .option('--label <name>', 'the account name (default: account-N)')
    .option('--no-browser', 'only print the URL')
    .option('--token-url <url>', 'the OAuth token endpoint (default: the config’s upstream.token-url; change only for testing)')
    .addOption(configOption())
    .addHelpText('after', example('claude-router accounts login --label work', 'claude-router accounts login --label work --no-browser'))
    .action(async (_opts: unknown, cmd: Command) => done(await runLogin(withGlobals<LoginOptions>(cmd))));
  accounts
    .command('list')
    .summary('list the accounts (never a token)')
    .description('List the accounts: those of the config file, then those added by command; never a token.')
    .addOption(configOption())
    .option('--json', 'as JSON: label, kind, enabled, fallback, source, credentials stored')
    .addHelpText('after', example('claude-router accounts list --json'))
    .action(async (_opts: unknown, cmd: Command) => done(await runAccounts('list', withGlobals<AccountsOptions>(cmd), [])));
  accounts
    .command('add')
    .summary('add an account from its tokens or an API key (never on the command line)')
    .description(
      'Add an account from its tokens. The access token (or API key) and, on a second line, the refresh token come on standard input; or per secret from `-` (standard input), a 0600 file, or CLAUDE_ROUTER_ACCESS_TOKEN, CLAUDE_ROUTER_REFRESH_TOKEN, CLAUDE_ROUTER_API_KEY.',
    )
    .requiredOption('--label <name>', 'the account name (1–64 characters)')
    .option('--access-token <token|->', 'the access token; `-` reads it from standard input (a literal value warns)')
    .option('--access-token-file <file>', 'read the access token from a 0600 file')
    .option('--refresh-token <token|->', 'the refresh token; `-` reads it from standard input (a literal value warns)')
    .option('--refresh-token-file <file>', 'read the refresh token from a 0600 file')
    .option('--api-key <key|->', 'an API key instead of OAuth tokens; `-` reads it from standard input (a literal value warns)')
    .option('--api-key-file <file>', 'read the API key from a 0600 file')
    .option('--expires-at <iso|ms>', 'when the access token expires')
    .option('--fallback', 'use it only when no other account can serve (the default for an API key, billed per token)')
    .option('--no-fallback', 'route to an API-key account like any other')
    .option('--replace', 'replace the credentials of an existing account of that label')
    .addOption(configOption())
    .addHelpText(
      'after',
      example(
        'printf \'%s\\n%s\\n\' "$ACCESS" "$REFRESH" | claude-router accounts add --label work',
        'claude-router accounts add --label payg --api-key-file ~/payg.key --fallback',
      ),
    )
    .action(async (_opts: unknown, cmd: Command) => done(await runAccounts('add', withGlobals<AccountsOptions>(cmd), [])));
  accounts
    .command('import')
    .summary("import Claude Code's own login")
    .description("Import Claude Code's own login (~/.claude/.credentials.json) as an account; the two then share one refresh token.")
    .option('--label <name>', 'the account name (default: claude-code-<subscription>)')
    .option('--credentials-file <file>', "Claude Code's credentials file")
    .addOption(configOption())
    .addHelpText('after', example('claude-router accounts import --label personal'))
    .action(async (_opts: unknown, cmd: Command) => done(await runAccounts('import', withGlobals<AccountsOptions>(cmd), [])));
  accounts
    .command('remove')
    .summary('remove an account and its stored credentials')
    .description('Remove an account added by command and its stored credentials.')
    .argument('[label]', 'the account to remove')
    .option('--label <name>', 'the account to remove (instead of the argument)')
    .addOption(configOption())
    .addHelpText('after', example('claude-router accounts remove work'))
    .action(async (label: string | undefined, _opts: unknown, cmd: Command) =>
      done(await runAccounts('remove', withGlobals<AccountsOptions>(cmd), label === undefined ? [] : [label])),
    );

  const edit =
    (name: AccountEdit) =>
    async (...args: unknown[]) => {
      const cmd = args[args.length - 1] as Command;
      done(await runAccountEdit(name, withGlobals<AccountEditOptions>(cmd), cmd.args));
    };
  accounts
    .command('rename')
    .summary('rename an account added by command')
    .description('Rename an account added by command; its credentials, order and primary follow. An account of the config file is renamed there.')
    .argument('<label>', 'the account')
    .argument('<new-label>', 'its new name')
    .addOption(configOption())
    .addHelpText('after', example('claude-router accounts rename account-1 work'))
    .action(edit('rename'));
  for (const [name, verb] of [
    ['enable', 'route requests to it again'],
    ['disable', 'route no request to it (its credentials stay)'],
  ] as const) {
    accounts
      .command(name)
      .summary(`${verb}`)
      .description(`${name[0].toUpperCase()}${name.slice(1)} an account: ${verb}. Kept in the state directory; \`enabled\` set in the config file wins.`)
      .argument('<label>', 'the account')
      .addOption(configOption())
      .addHelpText('after', example(`claude-router accounts ${name} work`))
      .action(edit(name));
  }
  accounts
    .command('move')
    .summary('change an account’s place in the order')
    .description(
      'Move an account in the configured order (the last tie-breaker, and the order of sequential-drain): up, down, first, last or to a 1-based position. Kept in the state directory.',
    )
    .argument('<label>', 'the account')
    .argument('<position>', 'up, down, first, last, or 1…N')
    .addOption(configOption())
    .addHelpText('after', example('claude-router accounts move work first', 'claude-router accounts move personal 2'))
    .action(edit('move'));
  accounts
    .command('primary')
    .summary('make an account the primary (or --clear)')
    .description('Make an account the primary (routing.primary-account). Kept in the state directory; routing.primary-account set in the config file wins.')
    .argument('[label]', 'the account')
    .option('--clear', 'no primary account')
    .addOption(configOption())
    .addHelpText('after', example('claude-router accounts primary work', 'claude-router accounts primary --clear'))
    .action(edit('primary'));
  accounts
    .command('logout')
    .summary('delete an account’s stored credentials (it stays, needing sign-in)')
    .description('Sign out of an account: delete its stored credentials; the account stays and needs `accounts login --label <label>` again.')
    .argument('<label>', 'the account')
    .addOption(configOption())
    .addHelpText('after', example('claude-router accounts logout work'))
    .action(edit('logout'));
}
