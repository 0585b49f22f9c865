/**
 * The environment that points Claude Code at the router, authenticated with
 * the local key, in subscription mode. Verified against Claude Code 2.1.328
 * (docs/claude-code-client.md): with `CLAUDE_CODE_OAUTH_TOKEN` set to the
 * router key, Claude Code sends `authorization: Bearer <key>` with the OAuth
 * beta and the 1-hour prompt-cache TTL, needs no login of its own and leaves
 * any stored login untouched; non-essential traffic (which would carry custom
 * headers, and the local key, to Anthropic directly) is switched off; and the loopback addresses
 * are added to the proxy bypass list, so a proxy in the user's environment never carries the
 * requests for the router (measured: docs/claude-code-client.md). Claude Code's gateway hint headers
 * are switched on (`CLAUDE_CODE_GATEWAY_HINT_HEADERS=1`): each request then says its class
 * (`main`, `subagent`, `compaction`, `auxiliary`), its prompt id and, after a compaction, that the
 * context was compacted — read into the decision record (docs/claude-code-client.md#request-classes).
 */

import type { SubscriptionType } from '../../config/schema';

/**
 * Variables for a terminal running Claude Code through the router at `url`, for accounts of plan
 * `subscriptionType`; the key as its value, or (for {@link shellExports}) as the file it is read from.
 */
export function claudeCodeEnvironment(url: string, clientKey: string, subscriptionType?: SubscriptionType, inherited?: InheritedProxyEnv): Record<string, string>;
export function claudeCodeEnvironment(
  url: string,
  clientKey: string | ValueFromFile,
  subscriptionType?: SubscriptionType,
  inherited?: InheritedProxyEnv,
): Record<string, string | ValueFromFile>;
export function claudeCodeEnvironment(
  url: string,
  clientKey: string | ValueFromFile,
  subscriptionType: SubscriptionType = 'max',
  inherited: InheritedProxyEnv = {},
): Record<string, string | ValueFromFile> {
  const noProxy = withLoopback(inherited.NO_PROXY ?? inherited.no_proxy);
  return {
    ANTHROPIC_BASE_URL: url,
    CLAUDE_CODE_OAUTH_TOKEN: clientKey,
    CLAUDE_CODE_SUBSCRIPTION_TYPE: subscriptionType,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    // Each request names its class and prompt (measured with 2.1.328: docs/claude-code-client.md#request-classes).
    CLAUDE_CODE_GATEWAY_HINT_HEADERS: '1',
    // An HTTPS_PROXY of the user's would otherwise carry the requests for the loopback router, and the key (docs/claude-code-client.md).
    NO_PROXY: noProxy,
    no_proxy: noProxy,
  };
}

/** The proxy bypass list the terminal had (`NO_PROXY`, else `no_proxy`): kept, with the loopback addresses added. */
export type InheritedProxyEnv = Partial<Record<'NO_PROXY' | 'no_proxy', string>>;

/** The addresses the router listens on (loopback only), which no proxy of the user's may carry. */
const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '::1'];

/** `list` (a comma-separated proxy bypass list, may be empty) with the loopback hosts added once each, its own entries first. */
export function withLoopback(list: string | undefined): string {
  const entries = (list ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  for (const host of LOOPBACK_HOSTS) if (!entries.includes(host)) entries.push(host);
  return entries.join(',');
}

/** The shells whose syntax {@link shellExports} writes. */
export type ShellKind = 'posix' | 'powershell' | 'cmd';

/**
 * A value the shell reads from a file when it runs the line (the file's first line, without its
 * line break), so the value itself — the local key — is never printed.
 */
export interface ValueFromFile {
  /** Absolute path of the file. */
  file: string;
}

/**
 * Lines that set `env` in a shell: `export NAME='value'` (POSIX), `$env:NAME = 'value'`
 * (PowerShell) or `set "NAME=value"` (cmd). Quotes are escaped for POSIX and PowerShell. A
 * {@link ValueFromFile} becomes `export NAME="$(cat 'file')"`,
 * `$env:NAME = (Get-Content -LiteralPath 'file' -TotalCount 1)` or `set /p NAME=<"file"`.
 * @throws Error for cmd, when a value or a file path holds `"`, `%`, `!` or a line break (cmd cannot quote them)
 */
export function shellExports(env: Record<string, string | ValueFromFile>, shell: ShellKind = 'posix'): string {
  return Object.entries(env)
    .map(([k, v]) => (typeof v === 'string' ? exportLine(k, v, shell) : exportFromFileLine(k, v.file, shell)))
    .join('\n');
}

function exportLine(k: string, v: string, shell: ShellKind): string {
  switch (shell) {
    case 'posix':
      return `export ${k}=${posixQuote(v)}`;
    case 'powershell':
      return `$env:${k} = ${powershellQuote(v)}`;
    case 'cmd':
      return `set "${k}=${cmdSafe(k, v)}"`;
  }
}

function exportFromFileLine(k: string, file: string, shell: ShellKind): string {
  switch (shell) {
    case 'posix':
      return `export ${k}="$(cat ${posixQuote(file)})"`;
    case 'powershell':
      return `$env:${k} = (Get-Content -LiteralPath ${powershellQuote(file)} -TotalCount 1)`;
    case 'cmd':
      return `set /p ${k}=<"${cmdSafe(k, file)}"`;
  }
}

const posixQuote = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;
const powershellQuote = (v: string) => `'${v.replace(/'/g, "''")}'`;

function cmdSafe(k: string, v: string): string {
  if (/["%!\r\n]/.test(v)) throw new Error(`${k} holds a character cmd cannot quote`);
  return v;
}
