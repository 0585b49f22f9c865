/**
 * `claude-router env [--shell posix|powershell|cmd]`: the lines that point a terminal's Claude
 * Code at the running proxy — the variables the VS Code terminals and "Copy Terminal Environment"
 * get (src/proxy/http/clientEnv.ts), in the shell's syntax, for `eval "$(claude-router env)"`.
 * A key kept in its file is read by the shell from that file when the lines run, so the key itself
 * is never printed; only a key given as `--key`, `CLAUDE_ROUTER_KEY` or the config's `client-key`
 * is written as a value (to stdout only, never to a log or an error).
 */
import type { SubscriptionType } from '../config/schema';
import { claudeCodeEnvironment, shellExports, type ShellKind } from '../proxy/http/clientEnv';
import { proxyTarget, type ProxyTargetOptions } from './proxyClient';

/** The shells `env --shell` writes for. */
export const ENV_SHELLS: readonly ShellKind[] = ['posix', 'powershell', 'cmd'];

/** Options of `env`. */
export interface EnvOptions extends ProxyTargetOptions {
  /** The shell's syntax (default: PowerShell on Windows, else POSIX). */
  shell?: ShellKind;
  /** The plan Claude Code is told (`CLAUDE_CODE_SUBSCRIPTION_TYPE`). */
  subscriptionType?: SubscriptionType;
}

/**
 * Prints the environment lines to stdout; a note on stderr when no running proxy is registered
 * (the URL is then the configured one).
 * @returns the exit code: 0
 * @throws UsageError (exit 2) when no key is found; Error (exit 1) when cmd cannot quote a value
 */
export async function runEnv(opts: EnvOptions, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const target = await proxyTarget(opts, env);
  const shell = opts.shell ?? (process.platform === 'win32' ? 'powershell' : 'posix');
  const key = target.keyFile !== undefined ? { file: target.keyFile } : target.key;
  const lines = shellExports(claudeCodeEnvironment(target.url, key, opts.subscriptionType ?? 'max', env), shell);
  if (opts.url === undefined && !target.registered) {
    process.stderr.write(`claude-router: no running proxy is registered in this state directory; the lines point at the configured address ${target.url}\n`);
  }
  process.stdout.write(`${lines}\n`);
  return 0;
}
