/**
 * `claude-router`: the standalone proxy and its tools.
 *
 *   claude-router start --config proxy-config.yaml [--port N]
 *   claude-router status [--config F] [--json]
 *   claude-router demo [--port N]
 *   claude-router accounts list|add|import|remove …
 *   claude-router rotate-key [--config F]
 *   claude-router report <decisions.jsonl>…
 *   claude-router replay <decisions.jsonl>… --ranking expiry-first
 *
 * Arguments are parsed with node's util.parseArgs; exit codes: 0 ok,
 * 1 runtime failure, 2 bad usage or invalid configuration.
 */
import { parseArgs } from 'node:util';
import { streamLogger, type LogLevel } from '../proxy/log';
import { startRouter } from './runtime';
import { runStatus } from './statusCommand';
import { runAccounts } from './accountsCommand';
import { runDemo } from './demo';
import { runRotateKey } from './keyCommand';
import { runReplay, runReport } from './logCommands';
import { configFromArgs, parsePort, UsageError, waitForSignal } from './args';
import { commandLineWarning } from './secretInput';
import { clientKeyFile } from './stateDir';

const USAGE = `usage:
  claude-router start --config <proxy-config.yaml> [--port <n>] [--log-level debug|info|warn|error]
  claude-router status [--config <file>] [--url <url>] [--key <client key>] [--json]
  claude-router demo [--port <n>]
  claude-router accounts list [--config <file>]
  claude-router accounts add --label <name> [--expires-at <iso|ms>] [--fallback] [--config <file>] < secrets
      secrets: the access token and, on a second line, the refresh token on standard input;
      or per secret --access-token|--refresh-token|--api-key - (standard input), --<same>-file <0600 file>,
      or CLAUDE_ROUTER_ACCESS_TOKEN, CLAUDE_ROUTER_REFRESH_TOKEN, CLAUDE_ROUTER_API_KEY
  claude-router accounts import [--label <name>] [--credentials-file <~/.claude/.credentials.json>] [--config <file>]
  claude-router accounts remove <label> [--config <file>]
  claude-router rotate-key [--config <file>]
  claude-router report <decisions.jsonl>… [--json]
  claude-router replay <decisions.jsonl>… [--ranking expiry-first|headroom-first] [--all]
`;

async function runStart(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { config: { type: 'string', short: 'c' }, port: { type: 'string', short: 'p' }, 'log-level': { type: 'string' } },
    strict: true,
  });
  const level = (values['log-level'] ?? 'info') as LogLevel;
  if (!['debug', 'info', 'warn', 'error'].includes(level)) throw new UsageError(`--log-level: expected debug, info, warn or error`);
  const { config, path } = await configFromArgs(values.config, false);
  const log = streamLogger((l) => process.stderr.write(l), level);
  const router = await startRouter({ config, configPath: path, port: parsePort(values.port), log });
  process.stdout.write(`listening on ${router.url}\n`);
  log.info(`state directory: ${router.stateDir} (client key: ${config.clientKey ? 'from the config file' : clientKeyFile(router.stateDir)})`);
  await waitForSignal();
  await router.close();
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  try {
    switch (command) {
      case 'start':
        await runStart(rest);
        return 0;
      case 'status':
        if (rest.some((a) => a === '--key' || a.startsWith('--key='))) {
          process.stderr.write(commandLineWarning('--key', 'CLAUDE_ROUTER_KEY', 'set CLAUDE_ROUTER_KEY instead, or pass --config so the key is read from the state directory'));
        }
        return await runStatus(rest);
      case 'demo':
        await runDemo(rest);
        return 0;
      case 'accounts':
        return await runAccounts(rest);
      case 'rotate-key':
        return await runRotateKey(rest);
      case 'report':
        return runReport(rest);
      case 'replay':
        return runReplay(rest);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (err instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(`claude-router: ${(err as Error).message}\n${err instanceof UsageError ? '' : USAGE}`);
      return 2;
    }
    process.stderr.write(`claude-router: ${(err as Error).message}\n`);
    return 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`claude-router: ${(err as Error).stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
