/**
 * The environment that points Claude Code at the router, authenticated with
 * the local key, in subscription mode. Verified against Claude Code 2.1.328
 * (docs/claude-code-client.md): with `CLAUDE_CODE_OAUTH_TOKEN` set to the
 * router key, Claude Code sends `authorization: Bearer <key>` with the OAuth
 * beta and the 1-hour prompt-cache TTL, needs no login of its own and leaves
 * any stored login untouched; non-essential traffic (which would carry custom
 * headers to Anthropic directly) is switched off.
 */

/** Variables for a terminal running Claude Code through the router at `url`. */
export function claudeCodeEnvironment(url: string, clientKey: string): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: url,
    CLAUDE_CODE_OAUTH_TOKEN: clientKey,
    CLAUDE_CODE_SUBSCRIPTION_TYPE: 'max',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
}

/** `export NAME='value'` lines for a POSIX shell. */
export function shellExports(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([k, v]) => `export ${k}='${v.replace(/'/g, `'\\''`)}'`)
    .join('\n');
}
