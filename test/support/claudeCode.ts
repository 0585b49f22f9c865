/**
 * Test support: run the real Claude Code CLI (a pinned native binary from npm) against a
 * local HTTP server — the router, or a stub of Anthropic's API — without touching the
 * internet, the developer's own Claude login or their ~/.claude.
 *
 * Install the binary once with `scripts/install-claude-code.sh` (it is cached outside the
 * repository). Findings about what this binary sends are in docs/claude-code-client.md.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The Claude Code version the install script pins and this helper expects. */
export const CLAUDE_CODE_VERSION = '2.1.328';

/** The script that installs the binary; named in errors. */
export const CLAUDE_CODE_INSTALL_SCRIPT = 'scripts/install-claude-code.sh';

/**
 * Environment that keeps Claude Code 2.1.328 off the network apart from ANTHROPIC_BASE_URL.
 * Observed (strace + a logging HTTPS proxy): without these it contacts api.anthropic.com
 * for `/api/event_logging/v2/batch` (telemetry), `/api/eval/sdk-…` (feature flags),
 * `/api/directory/server-urls`, and with an OAuth login `/api/claude_cli/bootstrap`,
 * `/api/oauth/profile`, `/api/claude_code_penguin_mode`, … — never through the base URL.
 * `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` alone removed all of them, except
 * `GET /api/oauth/profile` when a `~/.claude/.credentials.json` login is present.
 * `DISABLE_TELEMETRY=1` alone removes only the event logging and flag evaluation. The other
 * two are honoured names in the binary and cost nothing (no auto-update ran in `-p` anyway).
 * Interactive sessions also fetch the official plugin marketplace (downloads.claude.ai, then
 * github.com) unless `CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL=1`.
 */
export const CLAUDE_CODE_OFFLINE_ENV: Readonly<Record<string, string>> = Object.freeze({
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
  DISABLE_AUTOUPDATER: '1',
  CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL: '1',
});

export interface RunClaudeCodeOptions {
  /** Where Claude Code sends its API calls (`ANTHROPIC_BASE_URL`), e.g. `http://127.0.0.1:PORT`. */
  baseUrl: string;
  /** The prompt, passed as `claude -p <prompt>`. */
  prompt: string;
  /**
   * Extra environment, applied last: credentials (`ANTHROPIC_AUTH_TOKEN`, `ANTHROPIC_API_KEY`,
   * `CLAUDE_CODE_OAUTH_TOKEN`, `ANTHROPIC_CUSTOM_HEADERS`, …) or overrides. A value of
   * `undefined` removes a default variable (for instance one of {@link CLAUDE_CODE_OFFLINE_ENV}).
   */
  env?: Record<string, string | undefined>;
  /**
   * HOME for the run (Claude Code keeps `~/.claude.json` and `~/.claude/` there). Default: a
   * fresh temporary folder, deleted afterwards. Pass your own to pre-seed a login
   * (`.claude/.credentials.json`) or to inspect transcripts after the run; it is kept.
   */
  home?: string;
  /** Kill the whole process group after this long (SIGTERM, then SIGKILL 2 s later). Default 60 000. */
  timeoutMs?: number;
  /** Extra CLI arguments, placed after `-p <prompt>` (e.g. `['--output-format', 'json']`). */
  args?: string[];
}

export interface ClaudeCodeResult {
  /**
   * Exit code; `null` when the process was ended by a signal. Claude Code 2.1.328 catches
   * SIGTERM and exits 143, so a timed-out run usually reports 143 with `timedOut: true`.
   */
  code: number | null;
  stdout: string;
  stderr: string;
  /** The signal that ended the process, if any. */
  signal: NodeJS.Signals | null;
  /** True when `timeoutMs` elapsed and the process group was killed. */
  timedOut: boolean;
  /** Wall-clock time of the run. */
  durationMs: number;
}

function platformPackage(): string {
  let suffix = `${process.platform}-${process.arch}`;
  if (process.platform === 'linux') {
    const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
    if (report && report.header && report.header.glibcVersionRuntime === undefined) suffix += '-musl';
  }
  return `@anthropic-ai/claude-code-${suffix}`;
}

function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Absolute path of the Claude Code binary to test with.
 *
 * - `CLAUDE_CODE_BIN`, when set, wins (any `claude` binary; it must exist and be executable).
 * - Otherwise the binary that `scripts/install-claude-code.sh` caches in
 *   `${CLAUDE_ROUTER_CACHE:-~/.cache/claude-router}/claude-code-2.1.328/node_modules/@anthropic-ai/claude-code-<platform>/claude`.
 *
 * @throws Error naming the install script when no binary is found.
 */
export function claudeCodeBinary(): string {
  const fromEnv = process.env.CLAUDE_CODE_BIN;
  if (fromEnv) {
    const resolved = path.resolve(fromEnv);
    if (!isExecutableFile(resolved)) {
      throw new Error(`CLAUDE_CODE_BIN=${fromEnv} is not an executable file. Unset it to use the cached binary, or run ${CLAUDE_CODE_INSTALL_SCRIPT}.`);
    }
    return resolved;
  }
  const cacheRoot = process.env.CLAUDE_ROUTER_CACHE || path.join(os.homedir(), '.cache', 'claude-router');
  const binary = path.join(cacheRoot, `claude-code-${CLAUDE_CODE_VERSION}`, 'node_modules', ...platformPackage().split('/'), 'claude');
  if (!isExecutableFile(binary)) {
    throw new Error(
      `Claude Code ${CLAUDE_CODE_VERSION} is not installed (looked for ${binary}). ` +
        `Run ${CLAUDE_CODE_INSTALL_SCRIPT} (needs only the npm registry; ~360 MB, cached outside the repository), ` +
        `or set CLAUDE_CODE_BIN to a claude binary.`,
    );
  }
  return binary;
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/**
 * Run `claude -p <prompt> [...args]` against `baseUrl` and collect its output.
 *
 * The child gets a clean environment: only `PATH`, `HOME`, `ANTHROPIC_BASE_URL`,
 * {@link CLAUDE_CODE_OFFLINE_ENV} and `opts.env` — no inherited `ANTHROPIC_*` / `CLAUDE_*`
 * variables, so the developer's own credentials never leak in. HOME is a fresh temporary
 * folder unless `opts.home` is given; the working directory is `<home>/work` (created), so
 * no project `CLAUDE.md` is picked up. stdin is `/dev/null`. The process runs in its own
 * process group; on timeout the whole group is killed, and any stragglers are killed after
 * a normal exit too.
 *
 * No credentials are added: pass `ANTHROPIC_AUTH_TOKEN`, `ANTHROPIC_API_KEY`,
 * `CLAUDE_CODE_OAUTH_TOKEN` (subscription mode) or a `.claude/.credentials.json` in `home`.
 *
 * Resolves (never rejects for a non-zero exit or a timeout); rejects only when the binary is
 * missing or cannot be spawned.
 */
export async function runClaudeCode(opts: RunClaudeCodeOptions): Promise<ClaudeCodeResult> {
  const binary = claudeCodeBinary();
  const ownHome = opts.home === undefined;
  const home = opts.home ?? fs.mkdtempSync(path.join(os.tmpdir(), 'claude-code-home-'));
  const cwd = path.join(home, 'work');
  fs.mkdirSync(cwd, { recursive: true });

  const env: Record<string, string> = {};
  const merged: Record<string, string | undefined> = {
    PATH: process.env.PATH || '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    ANTHROPIC_BASE_URL: opts.baseUrl,
    ...CLAUDE_CODE_OFFLINE_ENV,
    ...opts.env,
  };
  for (const [key, value] of Object.entries(merged)) if (value !== undefined) env[key] = value;

  const timeoutMs = opts.timeoutMs ?? 60_000;
  const started = Date.now();
  try {
    return await new Promise<ClaudeCodeResult>((resolve, reject) => {
      const child = spawn(binary, ['-p', opts.prompt, ...(opts.args ?? [])], {
        cwd,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => err.push(chunk));

      let timedOut = false;
      let hardKill: NodeJS.Timeout | undefined;
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup(child.pid, 'SIGTERM');
        hardKill = setTimeout(() => killGroup(child.pid, 'SIGKILL'), 2_000);
      }, timeoutMs);

      let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
      let settled = false;
      const finish = (): void => {
        if (settled || exit === undefined) return;
        settled = true;
        clearTimeout(timer);
        if (hardKill) clearTimeout(hardKill);
        let stderr = Buffer.concat(err).toString('utf8');
        if (timedOut) stderr += `\n[runClaudeCode] timed out after ${timeoutMs} ms; process group killed\n`;
        resolve({
          code: exit.code,
          signal: exit.signal,
          stdout: Buffer.concat(out).toString('utf8'),
          stderr,
          timedOut,
          durationMs: Date.now() - started,
        });
      };

      child.once('error', (error) => {
        clearTimeout(timer);
        if (hardKill) clearTimeout(hardKill);
        if (!settled) {
          settled = true;
          reject(error);
        }
      });
      child.once('exit', (code, signal) => {
        exit = { code, signal };
        // Leftover children (shells, MCP servers) would keep the pipes open: end the group.
        killGroup(child.pid, 'SIGKILL');
        // Normally 'close' follows at once; do not wait forever for pipes held elsewhere.
        setTimeout(finish, 1_000).unref();
      });
      child.once('close', (code, signal) => {
        exit ??= { code, signal }; // 'exit' normally comes first
        finish();
      });
    });
  } finally {
    if (ownHome) fs.rmSync(home, { recursive: true, force: true });
  }
}
