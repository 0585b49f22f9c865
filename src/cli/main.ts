/**
 * `claude-router`: the standalone proxy and its tools.
 *
 *   claude-router start [--config proxy-config.yaml] [--port N]
 *   claude-router status [--watch] [--json]
 *   claude-router decisions [-n N] [--session H] [--account A] [--outcome O] [--reason R] [--since T] [--until T] [--request ID]
 *   claude-router explain [--model M]
 *   claude-router estimation [--json]
 *   claude-router env [--shell posix|powershell|cmd]
 *   claude-router demo [--port N]
 *   claude-router accounts login|list|add|import|remove|rename|enable|disable|move|primary|logout|reset-cooldown …
 *   claude-router rotate-key [--config F]
 *   claude-router report <decisions.jsonl>…
 *   claude-router replay <decisions.jsonl>… --ranking expiry-first
 *   claude-router completion bash|zsh|fish
 *   claude-router simulate <decisions.jsonl>… [--policy FILE|NAME]… [--all] [--json]
 *
 * Arguments are parsed by commander (per-command help with an example, `--version`, a
 * suggestion for a mistyped command or option); each command's work stays in its own
 * module. Exit codes: 0 ok, 1 runtime failure, 2 bad usage or invalid configuration.
 */
import { Argument, Command, CommanderError, Option } from 'commander';
import { version } from '../../package.json';
import { logUnhandledRejections, streamLogger, type LogLevel } from '../proxy/log';
import { DECISION_OUTCOMES } from '../routing/decision';
import { SELECTION_REASONS } from '../routing/planner/types';
import { startRouter } from './runtime';
import { runStatus, type StatusOptions } from './statusCommand';
import { runWatch } from './watchCommand';
import { runDecisions, type DecisionsOptions } from './decisionsCommand';
import { runExplain, type ExplainOptions } from './explainCommand';
import { runEstimation, type EstimationOptions } from './estimationCommand';
import { ENV_SHELLS, runEnv, type EnvOptions } from './envCommand';
import { registerAccountCommands } from './accountsProgram';
import { addProxyOptions, configOption, example, PROXY_HELP } from './help';
import { completionScript, SHELLS, type Shell } from './completion';
import { runDemo } from './demo';
import { runRotateKey } from './keyCommand';
import { registerResetCooldown } from './resetCooldownCommand';
import { runReplay, runReport } from './logCommands';
import { configForStart, parsePort, UsageError, waitForSignal, type GlobalOptions } from './args';
import { registerSimulate } from './simulateCommand';
import { clientKeyFile } from './stateDir';
import { exitWhenFlushed, quietOnClosedReader } from './exit';

interface StartOptions extends GlobalOptions {
  config?: string;
  port?: string;
  logLevel: LogLevel;
  upstreamUrl?: string;
  tokenUrl?: string;
}

async function runStart(opts: StartOptions): Promise<void> {
  const { config, path } = await configForStart(opts.config, opts.stateDir);
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

/** The command tree. `done(code)` receives the exit code of the command that ran. */
export function buildProgram(done: (code: number) => void): Command {
  const program = new Command('claude-router');
  program
    .description('A local proxy that routes Claude Code across several Claude accounts.')
    .version(version, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help for a command')
    .option('--state-dir <dir>', 'the state directory (accounts, credentials, client key, decision log); overrides the config file and the default ~/.config/claude-router')
    .option('--no-color', 'no colours (also NO_COLOR=1; colours are used only on a terminal)')
    .exitOverride()
    .showSuggestionAfterError(true)
    // Wrap descriptions even beside long command terms (commander gives up below 40 columns), so help fits 80 columns.
    .configureHelp({ showGlobalOptions: true, minWidthToWrap: 20 })
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
    .action(async (_opts: unknown, cmd: Command) => {
      await runStart(cmd.optsWithGlobals<StartOptions>());
      done(0);
    });

  registerStatusCommands(program, done);
  registerPreviewCommands(program, done);

  program
    .command('demo')
    .summary('simulated accounts behind a fake upstream, to try it without an account')
    .description('Run a fake Anthropic upstream with three simulated accounts and the proxy in front of it, to watch routing without an account.')
    .option('-p, --port <n>', 'listen on this port (default: a free one)')
    .addOption(new Option('--log-level <level>', 'log detail').choices(['debug', 'info', 'warn', 'error']).default('info'))
    .addHelpText('after', example('claude-router demo'))
    .action(async (_opts: unknown, cmd: Command) => {
      await runDemo(cmd.optsWithGlobals<{ port?: string; logLevel: LogLevel } & GlobalOptions>());
      done(0);
    });

  const accounts = program
    .command('accounts')
    .summary('sign in, list, add, import, rename, enable, disable, order or remove accounts')
    .description('Manage the accounts kept in the state directory (credentials in a 0600 store).')
    .addHelpText('after', example('claude-router accounts login --label work', 'claude-router accounts list'));
  registerAccountCommands(accounts, done);
  registerResetCooldown(accounts, done);

  program
    .command('rotate-key')
    .summary('replace the local client key')
    .description('Write a new local client key to <state-dir>/client-key; a running proxy refuses the old one by the time this returns.')
    .addOption(configOption())
    .addHelpText('after', example('claude-router rotate-key'))
    .action(async (_opts: unknown, cmd: Command) => done(await runRotateKey(cmd.optsWithGlobals<{ config?: string } & GlobalOptions>())));

  registerLogCommands(program, done);

  registerSimulate(program, done);
  registerShellCommands(program, done);
  return program;
}

/** The running proxy's pool and its decision log: `status`, `decisions`. */
function registerStatusCommands(program: Command, done: (code: number) => void): void {
  addProxyOptions(
    program
      .command('status')
      .summary("the running proxy's account pool, and why each account would or would not be picked (--watch: live)")
      .description(
        "Print the running proxy's account pool: status and eligibility, quota, resets, in-flight requests, sessions, where each account's settings come from, and why the router would or would not pick each account now. --watch keeps it on screen, redrawn on every change.",
      ),
  )
    .option('--json', 'the full /status report as JSON')
    .option('-w, --watch', 'a live view: redrawn in place on a terminal, printed again after each change otherwise')
    .addHelpText('after', `\n${PROXY_HELP}\n${example('claude-router status', 'claude-router status --watch', 'claude-router status --json')}`)
    .action(async (_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<StatusOptions & { watch?: boolean }>();
      if (opts.watch && opts.json) throw new UsageError('--watch and --json: choose one');
      done(await (opts.watch ? runWatch(opts) : runStatus(opts)));
    });

  addProxyOptions(
    program
      .command('decisions')
      .summary('the last decisions, each candidate’s verdict in words (filters: --session, --account, --outcome, --reason, --since, --until, --request)')
      .description(
        "The running proxy's last decisions from its decision log (on disk, across rotations), oldest first: when, which model and session, the account that served it and why, and every candidate's verdict in words.",
      ),
  )
    .option('-n, --limit <n>', 'how many (1–10000)', '20')
    .option('--session <hash>', 'only this session (its key hash, or the first 4+ hex digits)')
    .option('--account <label>', 'only requests this account served or was tried for')
    .addOption(new Option('--outcome <outcome>', 'only this outcome').choices(DECISION_OUTCOMES))
    .addOption(new Option('--reason <reason>', 'only this selection reason (session_affinity, weekly_reset, …)').choices(SELECTION_REASONS))
    .option('--since <time>', 'only requests since: ISO-8601, epoch ms, or a time ago (30m, 2h, 3d)')
    .option('--until <time>', 'only requests until: ISO-8601, epoch ms, or a time ago (30m, 2h, 3d)')
    .option('--request <id>', 'only this request (its x-claude-router-request-id, or a prefix of one)')
    .option('--json', 'the decision records as JSON (with --follow: one record per line)')
    .option('-f, --follow', 'keep printing new decisions as they are made (Ctrl-C ends)')
    .addHelpText(
      'after',
      `\n${PROXY_HELP}\n${example('claude-router decisions', 'claude-router decisions --follow', 'claude-router decisions --account work --since 2h', 'claude-router decisions --outcome no_usable_account --json')}`,
    )
    .action(async (_opts: unknown, cmd: Command) => done(await runDecisions(cmd.optsWithGlobals<DecisionsOptions>())));
}

/** What the running proxy would do and what a terminal needs to reach it: `explain`, `estimation`, `env`. */
function registerPreviewCommands(program: Command, done: (code: number) => void): void {
  addProxyOptions(
    program
      .command('explain')
      .summary('would it be picked: how a new request would be routed now')
      .description('How the running proxy would route a new request now — for a model, or for a session it has bound — with each account’s verdict in words.'),
  )
    .option('-m, --model <model>', 'the request’s model (its weekly model window counts)')
    .option('--session <hash>', 'a session key hash (from `decisions`), or its first 4+ hex digits: its binding counts')
    .option('--json', 'the preview as JSON')
    .addHelpText('after', `\n${PROXY_HELP}\n${example('claude-router explain', 'claude-router explain --model claude-opus-4-1')}`)
    .action(async (_opts: unknown, cmd: Command) => done(await runExplain(cmd.optsWithGlobals<ExplainOptions>())));

  addProxyOptions(
    program
      .command('estimation')
      .summary('cost leases: the output estimate per model, the tokens reserved per account')
      .description(
        'What the running proxy reserves for the requests in flight: per model, whether its output is predicted yet (the p95 of its complete answers), its samples and how often the p95 is beaten; per account, the estimated tokens reserved now.',
      ),
  )
    .option('--json', 'the /estimation report as JSON')
    .addHelpText('after', `\n${PROXY_HELP}\n${example('claude-router estimation', 'claude-router estimation --json')}`)
    .action(async (_opts: unknown, cmd: Command) => done(await runEstimation(cmd.optsWithGlobals<EstimationOptions>())));

  addProxyOptions(
    program
      .command('env')
      .summary("the environment that points a terminal's Claude Code at the running proxy")
      .description(
        'Print the variables that send Claude Code through the running proxy — the ones the VS Code terminals get — as shell lines to eval. The local key is read by the shell from its file when the lines run; it is not printed.',
      ),
  )
    .addOption(new Option('--shell <shell>', "the shell's syntax (default: powershell on Windows, else posix)").choices(ENV_SHELLS))
    .addOption(new Option('--subscription-type <plan>', 'the plan of the pooled accounts Claude Code is told (its default model and label)').choices(['max', 'pro']).default('max'))
    .addHelpText(
      'after',
      `\n${PROXY_HELP}\n${example('eval "$(claude-router env)"', 'claude-router env --shell powershell | Out-String | Invoke-Expression', 'claude-router env --shell cmd > env.cmd && call env.cmd')}`,
    )
    .action(async (_opts: unknown, cmd: Command) => done(await runEnv(cmd.optsWithGlobals<EnvOptions>())));
}

/** Decision logs read offline: `report`, `replay`. */
function registerLogCommands(program: Command, done: (code: number) => void): void {
  program
    .command('report')
    .summary('rollout metrics of decision logs')
    .description('Rollout metrics of decision logs: mid-session switches, ping-pong, cache re-writes, fallback share, decisions by reason.')
    .argument('<decisions.jsonl...>', 'decision logs (version 1 or 2)')
    .option('--json', 'as JSON')
    .addHelpText('after', example('claude-router report ~/.config/claude-router/decisions.jsonl'))
    .action(async (files: string[], opts: { json?: boolean }) => done(await runReport(files, opts)));

  program
    .command('replay')
    .summary('re-rank recorded decisions with the current code')
    .description('Re-rank recorded decisions with the current code; exits 1 when any differs.')
    .argument('<decisions.jsonl...>', 'decision logs (version 1 or 2)')
    .addOption(new Option('--ranking <ranking>', 'the account ranking to replay with').choices(['expiry-first', 'headroom-first']).default('expiry-first'))
    .option('--all', 're-rank decisions made under another ranking too (a what-if)')
    .addHelpText('after', example('claude-router replay decisions.jsonl --ranking headroom-first'))
    .action(async (files: string[], opts: { ranking: 'expiry-first' | 'headroom-first'; all?: boolean }) => done(await runReplay(files, opts)));
}

/** The shell's help: `completion` (made from the whole tree when it runs), `help <command> [subcommand]`. */
function registerShellCommands(program: Command, done: (code: number) => void): void {
  // The script is made when the command runs, from the whole tree: commands defined after this one are in it too.
  program
    .command('completion')
    .summary('a shell completion script (bash, zsh or fish)')
    .description('Print a completion script for the shell, made from the commands and options of this version.')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(SHELLS))
    .addHelpText(
      'after',
      example(
        'eval "$(claude-router completion bash)"    # in ~/.bashrc',
        'eval "$(claude-router completion zsh)"     # in ~/.zshrc',
        'claude-router completion fish | source     # in ~/.config/fish/config.fish',
      ),
    )
    .action((shell: Shell) => {
      process.stdout.write(completionScript(program, shell));
      done(0);
    });
  // `help <command> [subcommand]`: commander's own help command takes one level and shows the whole help for a name it does not know.
  program.helpCommand(false);
  program
    .command('help')
    .summary('show help for a command (help accounts login)')
    .argument('[command...]', 'the command, and its subcommand')
    .action((names: string[]) => {
      let cmd: Command = program;
      for (const name of names) {
        const sub = cmd.commands.find((c) => c.name() === name || c.aliases().includes(name));
        if (!sub) {
          const known = cmd.commands.map((c) => c.name()).filter((n) => n !== 'help');
          throw new UsageError(
            `no command "${[...names.slice(0, names.indexOf(name)), name].join(' ')}"; ${cmd === program ? 'the commands' : `the commands of ${cmd.name()}`}: ${known.join(', ')}`,
          );
        }
        cmd = sub;
      }
      cmd.outputHelp();
      done(0);
    });
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
  // A stray rejection (a store answer nobody waited for) is logged, never the end of a running router.
  logUnhandledRejections(streamLogger((line) => process.stderr.write(line)));
  // Exits only once every byte written reached the reader (a slow pipe too); a reader that stops early
  // (`claude-router --help | head`) is no error of ours.
  let result: number | undefined;
  quietOnClosedReader(() => result ?? 0);
  main(process.argv.slice(2)).then(
    (code) => exitWhenFlushed((result = code)),
    (err) => {
      process.stderr.write(`claude-router: ${(err as Error).stack ?? String(err)}\n`);
      exitWhenFlushed((result = 1));
    },
  );
}
