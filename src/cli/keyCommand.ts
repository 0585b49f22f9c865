/**
 * `claude-router rotate-key`: replaces the local client key in `<state-dir>/client-key` (0600).
 * A proxy running from that state directory watches the file and takes the new key within a
 * second; the command waits until the proxy proves it holds the new key (the identity
 * challenge, which sends no key) so that, when it returns, the old key is already refused.
 */
import { verifyHolder } from '../proxy/http/identity';
import { configFromArgs, UsageError, type GlobalOptions } from './args';
import { stateDirOf } from './runtime';
import { findRunningProxy } from './discovery';
import { clientKeyFile, rotateClientKeyFile } from './stateDir';

/** How long the command waits for a running proxy to take the new key, ms. */
const ADOPT_TIMEOUT_MS = 5_000;

/**
 * @returns 0 when the key was replaced (and a running proxy took it), 1 when a running proxy did
 * not take it in time
 * @throws UsageError when the config file sets `client-key` (the key lives there, not in the state directory)
 */
export async function runRotateKey(values: { config?: string } & GlobalOptions): Promise<number> {
  const { config, path } = await configFromArgs(values.config, values.stateDir);
  if (config.clientKey !== undefined) throw new UsageError(`${path} sets client-key: change it there (a running proxy reloads the file)`);
  const dir = stateDirOf(config);
  const key = rotateClientKeyFile(dir);
  const file = clientKeyFile(dir);
  process.stdout.write(`new client key written to ${file}\n`);
  // Only a proxy running from this state directory reads this key file (not a demo registered here).
  const running = findRunningProxy(dir);
  const url = running?.stateDir === dir ? running.url : undefined;
  if (url) {
    if (!(await provesKey(url, key))) {
      process.stderr.write(`claude-router: the proxy at ${url} has not taken the new key within ${ADOPT_TIMEOUT_MS / 1000} s; restart it\n`);
      return 1;
    }
    process.stdout.write(`the proxy at ${url} now refuses the previous key\n`);
  } else if (running) {
    // The proxy registered here (the demo) keeps its key in its own state directory: say so, or the user would think it rotated.
    process.stdout.write(
      `note: the proxy registered here (${running.url}) runs from another state directory and keeps its own key, unchanged; to rotate that one: claude-router rotate-key --state-dir ${running.stateDir}\n`,
    );
  }
  process.stdout.write(`clients need the new key: start them from a new shell with CLAUDE_CODE_OAUTH_TOKEN="$(cat ${file})"\n`);
  return 0;
}

/** Whether the proxy at `url` proves it holds `key` within ADOPT_TIMEOUT_MS (asked every 100 ms). */
async function provesKey(url: string, key: string): Promise<boolean> {
  const deadline = Date.now() + ADOPT_TIMEOUT_MS;
  for (;;) {
    const holder = await verifyHolder(url, key, { timeoutMs: 1_000 });
    if (holder.kind === 'ours') {
      await holder.client.close();
      return true;
    }
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}
