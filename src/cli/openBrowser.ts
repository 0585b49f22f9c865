/**
 * Opening a URL in the user's browser, for `accounts login`. The `open` package (v11) is ESM-only
 * and brings six dependencies for what is one spawn here, so this follows the conventions it
 * follows: `$BROWSER` when set (as Python's webbrowser and git do), else the platform's opener —
 * `open` on macOS, `rundll32 url.dll,FileProtocolHandler` on Windows (no shell parses the `&`s of
 * the URL), `xdg-open` elsewhere. The caller prints the URL in any case.
 */
import { spawn } from 'node:child_process';

/** The command and arguments that open `url`. */
export function browserCommand(url: string, env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): [string, string[]] {
  const browser = env.BROWSER?.trim();
  if (browser) return [browser, [url]];
  if (platform === 'darwin') return ['open', [url]];
  if (platform === 'win32') return ['rundll32', ['url.dll,FileProtocolHandler', url]];
  return ['xdg-open', [url]];
}

/**
 * Starts the browser on `url`, detached (it outlives this process; its output is ignored).
 * @returns whether the opener started (false when it is not installed); never rejects
 */
export function openInBrowser(url: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const [command, args] = browserCommand(url, env);
  return new Promise((resolve) => {
    try {
      const child = spawn(command, args, { detached: true, stdio: 'ignore', env });
      child.once('spawn', () => {
        child.unref();
        resolve(true);
      });
      child.once('error', () => resolve(false));
    } catch {
      resolve(false);
    }
  });
}
