/**
 * Claude Code's own login, for "import". Claude Code keeps it in `~/.claude/.credentials.json`
 * (or under `CLAUDE_CONFIG_DIR` when that is set), inside the object `claudeAiOauth {accessToken,
 * refreshToken, expiresAt (epoch ms), …}` (docs/claude-code-client.md#claude-codes-own-login-import).
 * If Claude Code goes on using a login after it was imported, Claude Code and the router both
 * rotate the same refresh token and invalidate each other's copy; callers must warn the user.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Credentials } from './types';

/** Default location of Claude Code's credentials file. */
export function claudeCodeCredentialsPath(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env.CLAUDE_CONFIG_DIR && env.CLAUDE_CONFIG_DIR.trim() ? env.CLAUDE_CONFIG_DIR : path.join(os.homedir(), '.claude');
  return path.join(dir, '.credentials.json');
}

/**
 * Reads Claude Code's login.
 * @throws Error (message names the file, never a token) when missing or malformed
 */
export async function readClaudeCodeLogin(file: string): Promise<Credentials & { subscriptionType?: string }> {
  let data: unknown;
  try {
    data = JSON.parse(await fs.readFile(file, 'utf8'));
  } catch (err) {
    // eslint-disable-next-line preserve-caught-error -- no cause: JSON.parse's message may quote the token
    throw new Error(`cannot read Claude Code's login at ${file}: ${(err as NodeJS.ErrnoException).code ?? 'not JSON'}`);
  }
  const o = (data as { claudeAiOauth?: Record<string, unknown> } | null)?.claudeAiOauth;
  if (!o || typeof o.accessToken !== 'string') throw new Error(`${file} holds no claudeAiOauth login`);
  return {
    accessToken: o.accessToken,
    refreshToken: typeof o.refreshToken === 'string' ? o.refreshToken : undefined,
    expiresAtMs: typeof o.expiresAt === 'number' ? o.expiresAt : undefined,
    subscriptionType: typeof o.subscriptionType === 'string' ? o.subscriptionType : undefined,
  };
}
