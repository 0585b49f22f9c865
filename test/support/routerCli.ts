/**
 * Runs the BUILT router CLI (`node dist/cli.js …`, produced by `npm run build`) as a child
 * process: a long-running `start`/`demo` in its own process group, or a one-shot command.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Absolute path of the bundled CLI. */
export const CLI_JS = path.resolve(__dirname, '..', '..', '..', 'dist', 'cli.js');

function assertBuilt(): void {
  if (!fs.existsSync(CLI_JS)) throw new Error(`${CLI_JS} is missing: run \`npm run build\` first`);
}

/** Environment for CLI children: the test's own, minus anything that would change routing. */
function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.CLAUDE_ROUTER_QUOTA_ROUTING;
  return env;
}

export interface CliProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or signal name) once the process is gone. */
  exited: Promise<number | string>;
  /** SIGTERM to the whole process group, SIGKILL after `graceMs`; resolves when it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Spawns `node dist/cli.js <args>` detached (own process group); its standard input is `input`
 * (default: empty), then ends — or stays open for `child.stdin` with `input: null`.
 */
export function spawnCli(args: string[], opts: { cwd?: string; env?: Record<string, string>; input?: string | null } = {}): CliProcess {
  assertBuilt();
  const child = spawn(process.execPath, [CLI_JS, ...args], {
    cwd: opts.cwd,
    env: cliEnv(opts.env),
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  if (opts.input !== null) child.stdin.end(opts.input ?? '');
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<number | string>((resolve) => {
    child.once('close', (code, signal) => resolve(code ?? signal ?? 'unknown'));
    child.once('error', (e) => {
      err += `\n[spawn error] ${e.message}\n`;
      resolve('spawn-error');
    });
  });
  const killGroup = (signal: NodeJS.Signals) => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // ESRCH: already gone.
    }
  };
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    async stop(graceMs = 3_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      killGroup('SIGTERM');
      const timer = setTimeout(() => killGroup('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Waits until stdout has a line matching `re` (returns the match), or fails after `ms` — with
 * the process's stdout, stderr and exit status in the message.
 */
export async function waitForStdout(p: CliProcess, re: RegExp, ms = 15_000): Promise<RegExpMatchArray> {
  const end = Date.now() + ms;
  let exit: number | string | undefined;
  void p.exited.then((c) => (exit = c));
  for (;;) {
    const m = p.stdout().match(re);
    if (m) return m;
    if (exit !== undefined || Date.now() > end) {
      throw new Error(
        `${exit !== undefined ? `the CLI exited (${exit})` : `timed out after ${ms} ms`} before printing ${re}\n` + `--- stdout ---\n${p.stdout()}\n--- stderr ---\n${p.stderr()}`,
      );
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Starts `claude-router start --config <file>` and waits for `listening on http://127.0.0.1:PORT`. */
export async function startRouterCli(configFile: string, ms = 15_000): Promise<{ proc: CliProcess; url: string; port: number }> {
  const proc = spawnCli(['start', '--config', configFile]);
  try {
    const m = await waitForStdout(proc, /^listening on (http:\/\/127\.0\.0\.1:(\d+))$/m, ms);
    return { proc, url: m[1], port: Number(m[2]) };
  } catch (err) {
    await proc.stop();
    throw err;
  }
}

/** Runs a CLI command to completion (killed after `timeoutMs`), with `opts` as for {@link spawnCli}. */
export async function runCli(
  args: string[],
  timeoutMs = 10_000,
  opts: Parameters<typeof spawnCli>[1] = {},
): Promise<{ code: number | string; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  const p = spawnCli(args, opts);
  const timer = setTimeout(() => void p.stop(500), timeoutMs);
  const code = await p.exited;
  clearTimeout(timer);
  return { code, stdout: p.stdout(), stderr: p.stderr(), ms: Date.now() - started };
}

/** YAML text for a proxy config; every scalar JSON-quoted (valid YAML), keys kebab-case. */
export function proxyConfigYaml(c: {
  port: number;
  baseUrl: string;
  tokenUrl: string;
  stateDir: string;
  clientKey: string;
  accounts: { label: string; accessToken: string; refreshToken?: string }[];
  extra?: string;
}): string {
  const q = JSON.stringify;
  return [
    'listen:',
    '  host: 127.0.0.1',
    `  port: ${c.port}`,
    'upstream:',
    `  base-url: ${q(c.baseUrl)}`,
    `  token-url: ${q(c.tokenUrl)}`,
    `state-dir: ${q(c.stateDir)}`,
    `client-key: ${q(c.clientKey)}`,
    'accounts:',
    ...c.accounts.flatMap((a) => [`  - label: ${q(a.label)}`, `    access-token: ${q(a.accessToken)}`, ...(a.refreshToken ? [`    refresh-token: ${q(a.refreshToken)}`] : [])]),
    ...(c.extra ? [c.extra] : []),
    '',
  ].join('\n');
}
