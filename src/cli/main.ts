/**
 * `claude-router`: the standalone proxy and its tools.
 *
 *   claude-router start [--config proxy-config.yaml] [--port N]
 *   claude-router status [--config F] [--json]
 *   claude-router demo [--port N]
 *   claude-router accounts list|add|import|remove …
 *   claude-router rotate-key [--config F]
 *   claude-router report <decisions.jsonl>…
 *   claude-router replay <decisions.jsonl>… --ranking expiry-first
 *   claude-router simulate <decisions.jsonl>… [--policy FILE|NAME]… [--all] [--json]
 *
 * Arguments are parsed by commander (per-command help with an example, `--version`, a
 * suggestion for a mistyped command or option); each command's work stays in its own
 * module. Exit codes: 0 ok, 1 runtime failure, 2 bad usage or invalid configuration.
 */
import { Command, CommanderError, Option } from 'commander';
import { version } from '../../package.json';
import { streamLogger, type LogLevel } from '../proxy/log';
import { startRouter } from './runtime';
import { runStatus } from './statusCommand';
import { runAccounts, type AccountsOptions } from './accountsCommand';
import { runDemo } from './demo';
import { runRotateKey } from './keyCommand';
import { runReplay, runReport } from './logCommands';
import { registerSimulate } from './simulateCommand';
import { configForStart, parsePort, UsageError, waitForSignal } from './args';
import { commandLineWarning } from './secretInput';
import { clientKeyFile } from './stateDir';

interface StartOptions {
  config?: string;
  port?: string;
  logLevel: LogLevel;
  upstreamUrl?: string;
  tokenUrl?: string;
}

async function runStart(opts: StartOptions): Promise<void> {
  const { config, path } = await configForStart(opts.config);
  if (opts.upstreamUrl !== undefined || opts.tokenUrl !== undefined) {
    config.upstream = { ...config.upstream, ...(opts.upstreamUrl !== undefined && { baseUrl: opts.upstreamUrl }), ...(opts.tokenUrl !== undefined && { tokenUrl: opts.tokenUrl }) };
  }
  const log = streamLogger((l) => process.stderr.write(l), opts.logLevel);
  const router = await startRouter({ config, configPath: path, port: parsePort(opts.port), log });
  process.stdout.write(`listening on ${router.url}\n`);
  log.info(
    `state directory: ${router.stateDir}${path ? '' : ' (no config file: its accounts and the defaults)'}; client key: ${config.clientKey ? 'from the config file' : clientKeyFile(router.stateDir)}`,
  );
  await waitForSignal();
  await router.close();
}

/** An example shown under a command's help. */
const example = (...lines: string[]) => `\nExample${lines.length > 1 ? 's' : ''}:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;

const configOption = () => new Option('-c, --config <file>', 'proxy-config.yaml (selects the state directory; default: ~/.config/claude-router)');

/** The command tree. `done(code)` receives the exit code of the command that ran. */
export function buildProgram(done: (code: number) => void): Command {
  const program = new Command('claude-router');
  program
    .description('A local proxy that routes Claude Code across several Claude accounts.')
    .version(version, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help for a command')
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureOutput({
      outputError: (str, write) => write(`claude-router: ${str.replace(/^error: /, '')}`),
    })
    .addHelpText('after', `\nExit codes: 0 ok, 1 failure, 2 bad usage or invalid configuration.\nRun \`claude-router <command> --help\` for a command's options.\n`);

  program
    .command('start')
    .summary('run the proxy (from --config, or from the state directory)')
    .description(
      'Run the proxy in the foreground. With --config, from that file (reloaded when it changes); without, from the accounts of the state directory (`accounts add|import`) and the defaults.',
    )
    .addOption(configOption())
    .option('-p, --port <n>', 'listen on this port (0: a free one); overrides listen.port')
    .addOption(new Option('--log-level <level>', 'log detail').choices(['debug', 'info', 'warn', 'error']).default('info'))
    .option('--upstream-url <url>', 'where requests go (default https://api.anthropic.com; change only for testing)')
    .option('--token-url <url>', 'the OAuth token endpoint (change only for testing)')
    .addHelpText('after', example('claude-router start', 'claude-router start --config proxy-config.yaml --port 0'))
    .action(async (opts: StartOptions) => {
      await runStart(opts);
      done(0);
    });

  program
    .command('status')
    .summary("the running proxy's account pool")
    .description("Print the running proxy's account pool: state, quota, resets, in-flight requests, sessions.")
    .addOption(configOption())
    .option('--url <url>', 'the proxy to ask (default: the one running from the state directory)')
    .option('--key <key>', 'the client key (visible to other users: prefer CLAUDE_ROUTER_KEY)')
    .option('--json', 'the full /status report as JSON')
    .addHelpText('after', `\nThe client key comes from the state directory, else CLAUDE_ROUTER_KEY.\n${example('claude-router status', 'claude-router status --json')}`)
    .action(async (opts: { config?: string; url?: string; key?: string; json?: boolean }) => {
      if (opts.key !== undefined) {
        process.stderr.write(commandLineWarning('--key', 'CLAUDE_ROUTER_KEY', 'set CLAUDE_ROUTER_KEY instead, or pass --config so the key is read from the state directory'));
      }
      done(await runStatus(opts));
    });

  program
    .command('demo')
    .summary('simulated accounts behind a fake upstream, to try it without an account')
    .description('Run a fake Anthropic upstream with three simulated accounts and the proxy in front of it, to watch routing without an account.')
    .option('-p, --port <n>', 'listen on this port (default: a free one)')
    .addOption(new Option('--log-level <level>', 'log detail').choices(['debug', 'info', 'warn', 'error']).default('info'))
    .addHelpText('after', example('claude-router demo'))
    .action(async (opts: { port?: string; logLevel: LogLevel }) => {
      await runDemo(opts);
      done(0);
    });

  const accounts = program
    .command('accounts')
    .summary('list, add, import or remove accounts')
    .description('Manage the accounts kept in the state directory (credentials in a 0600 store).')
    .addHelpText('after', example('claude-router accounts list', 'claude-router accounts import'));
  accounts
    .command('list')
    .summary('list the accounts (never a token)')
    .description('List the accounts: those of the config file, then those added by command; never a token.')
    .addOption(configOption())
    .option('--json', 'as JSON: label, kind, enabled, fallback, source, credentials stored')
    .addHelpText('after', example('claude-router accounts list --json'))
    .action(async (opts: AccountsOptions) => done(await runAccounts('list', opts, [])));
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
    .option('--fallback', 'use it only when no other account can serve')
    .addOption(configOption())
    .addHelpText(
      'after',
      example(
        'printf \'%s\\n%s\\n\' "$ACCESS" "$REFRESH" | claude-router accounts add --label work',
        'claude-router accounts add --label payg --api-key-file ~/payg.key --fallback',
      ),
    )
    .action(async (opts: AccountsOptions) => done(await runAccounts('add', opts, [])));
  accounts
    .command('import')
    .summary("import Claude Code's own login")
    .description("Import Claude Code's own login (~/.claude/.credentials.json) as an account; the two then share one refresh token.")
    .option('--label <name>', 'the account name (default: claude-code-<subscription>)')
    .option('--credentials-file <file>', "Claude Code's credentials file")
    .addOption(configOption())
    .addHelpText('after', example('claude-router accounts import --label personal'))
    .action(async (opts: AccountsOptions) => done(await runAccounts('import', opts, [])));
  accounts
    .command('remove')
    .summary('remove an account and its stored credentials')
    .description('Remove an account added by command and its stored credentials.')
    .argument('[label]', 'the account to remove')
    .option('--label <name>', 'the account to remove (instead of the argument)')
    .addOption(configOption())
    .addHelpText('after', example('claude-router accounts remove work'))
    .action(async (label: string | undefined, opts: AccountsOptions) => done(await runAccounts('remove', opts, label === undefined ? [] : [label])));

  program
    .command('rotate-key')
    .summary('replace the local client key')
    .description('Write a new local client key to <state-dir>/client-key; a running proxy refuses the old one by the time this returns.')
    .addOption(configOption())
    .addHelpText('after', example('claude-router rotate-key'))
    .action(async (opts: { config?: string }) => done(await runRotateKey(opts)));

  program
    .command('report')
    .summary('rollout metrics of decision logs')
    .description('Rollout metrics of decision logs: mid-session switches, ping-pong, cache re-writes, fallback share, decisions by reason.')
    .argument('<decisions.jsonl...>', 'decision logs (version 1 or 2)')
    .option('--json', 'as JSON')
    .addHelpText('after', example('claude-router report ~/.config/claude-router/decisions.jsonl'))
    .action((files: string[], opts: { json?: boolean }) => done(runReport(files, opts)));

  program
    .command('replay')
    .summary('re-rank recorded decisions with the current code')
    .description('Re-rank recorded decisions with the current code; exits 1 when any differs.')
    .argument('<decisions.jsonl...>', 'decision logs (version 1 or 2)')
    .addOption(new Option('--ranking <ranking>', 'the account ranking to replay with').choices(['expiry-first', 'headroom-first']).default('expiry-first'))
    .option('--all', 're-rank decisions made under another ranking too (a what-if)')
    .addHelpText('after', example('claude-router replay decisions.jsonl --ranking headroom-first'))
    .action((files: string[], opts: { ranking: 'expiry-first' | 'headroom-first'; all?: boolean }) => done(runReplay(files, opts)));

  registerSimulate(program, done);

  return program;
}

export async function main(argv: string[]): Promise<number> {
  let code = 0;
  const program = buildProgram((c) => (code = c));
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help or version asked for: 0. Help shown because no command was given, or a parse error: 2.
      return err.exitCode === 0 ? 0 : 2;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`claude-router: ${err.message}\n`);
      return 2;
    }
    process.stderr.write(`claude-router: ${(err as Error).message}\n`);
    return 1;
  }
}

if (require.main === module) {
  // A reader that stops early (`claude-router --help | head`) is no error of ours.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`claude-router: ${(err as Error).stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
