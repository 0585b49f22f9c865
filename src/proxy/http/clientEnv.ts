/**
 * The environment that points Claude Code at the router, authenticated with
 * the local key, in subscription mode. Verified against Claude Code 2.1.328
 * (docs/claude-code-client.md): with `CLAUDE_CODE_OAUTH_TOKEN` set to the
 * router key, Claude Code sends `authorization: Bearer <key>` with the OAuth
 * beta and the 1-hour prompt-cache TTL, needs no login of its own and leaves
 * any stored login untouched; non-essential traffic (which would carry custom
 * headers to Anthropic directly) is switched off.
 */

import type { SubscriptionType } from '../../config/schema';

/** Variables for a terminal running Claude Code through the router at `url`, for accounts of plan `subscriptionType`. */
export function claudeCodeEnvironment(url: string, clientKey: string, subscriptionType: SubscriptionType = 'max'): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: url,
    CLAUDE_CODE_OAUTH_TOKEN: clientKey,
    CLAUDE_CODE_SUBSCRIPTION_TYPE: subscriptionType,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
}

/** The shells whose syntax {@link shellExports} writes. */
export type ShellKind = 'posix' | 'powershell' | 'cmd';

/**
 * Lines that set `env` in a shell: `export NAME='value'` (POSIX), `$env:NAME = 'value'`
 * (PowerShell) or `set "NAME=value"` (cmd). Quotes are escaped for POSIX and PowerShell.
 * @throws Error for cmd, when a value holds `"`, `%`, `!` or a line break (cmd cannot quote them)
 */
export function shellExports(env: Record<string, string>, shell: ShellKind = 'posix'): string {
  return Object.entries(env)
    .map(([k, v]) => {
      switch (shell) {
        case 'posix':
          return `export ${k}='${v.replace(/'/g, `'\\''`)}'`;
        case 'powershell':
          return `$env:${k} = '${v.replace(/'/g, "''")}'`;
        case 'cmd':
          if (/["%!\r\n]/.test(v)) throw new Error(`${k} holds a character cmd cannot quote`);
          return `set "${k}=${v}"`;
      }
    })
    .join('\n');
}
