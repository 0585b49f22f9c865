/**
 * `claude-router demo`: a fake Anthropic upstream with three simulated
 * accounts plus the proxy in front of it, so a new user can watch routing
 * work without a real account. State lives in a fresh temporary directory,
 * kept when the demo stops so its decision log can go to `report` and `replay`
 * (it holds only the simulated accounts' made-up tokens).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEMO_ACCOUNTS, startFakeUpstream } from '../sim';
import { streamLogger } from '../proxy/log';
import { startRouter, stateDirOf } from './runtime';
import { claudeCodeEnvironment, shellExports } from '../proxy/http/clientEnv';
import { clientKeyFile } from './stateDir';
import { parsePort, waitForSignal, type GlobalOptions } from './args';
import { findRunningProxy, registerProxy, unregisterProxy } from './discovery';

/**
 * Runs the demo until SIGINT or SIGTERM. It registers itself in the user's state directory
 * (`--state-dir`, else the default) while no other proxy is registered there, so plain `status`,
 * `decisions` and `explain` find it.
 */
export async function runDemo(values: { port?: string; logLevel?: string } & GlobalOptions): Promise<void> {
  const sim = await startFakeUpstream({ accounts: DEMO_ACCOUNTS });
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'claude-router-demo-'));
  const log = streamLogger((l) => process.stderr.write(l), values.logLevel === 'debug' ? 'debug' : 'info');
  const router = await startRouter({
    config: {
      listen: { host: '127.0.0.1', port: parsePort(values.port) ?? 0 },
      upstream: { baseUrl: sim.url, tokenUrl: sim.tokenUrl },
      stateDir,
      accounts: DEMO_ACCOUNTS.map((a) => ({ label: a.label, accessToken: a.accessToken, refreshToken: a.refreshToken })),
    },
    log,
  });
  const home = stateDirOf(values.stateDir === undefined ? {} : { stateDir: values.stateDir });
  const registered = findRunningProxy(home) === undefined;
  if (registered) registerProxy(home, { url: router.url, pid: process.pid, stateDir });
  const watch = registered ? 'node dist/cli.js status' : `node dist/cli.js status --state-dir ${shellQuote(stateDir)}`;
  const envCommand = registered ? 'node dist/cli.js env' : `node dist/cli.js env --state-dir ${shellQuote(stateDir)} --url ${router.url}`;
  // No line printed here holds the key: a pasted command with it would land in the shell's
  // history. The key is read from its file where it is used.
  const env = shellExports(claudeCodeEnvironment(router.url, { file: clientKeyFile(stateDir) }, 'max', process.env));
  process.stdout.write(
    `Claude Router demo: ${DEMO_ACCOUNTS.length} simulated accounts (${DEMO_ACCOUNTS.map((a) => a.label).join(', ')}) behind a fake Anthropic upstream.\n` +
      `Point Claude Code at it: in another terminal run  eval "$(${envCommand})"  (PowerShell: add --shell powershell), then \`claude\`; or paste:\n` +
      env.replace(/^/gm, '  ') +
      '\n' +
      `Watch the pool: ${watch} (or status --watch; decisions shows why each request went where it went)\n` +
      `Decisions are logged to ${path.join(stateDir, 'decisions.jsonl')}. Ctrl-C stops the demo.\n` +
      `listening on ${router.url}\n`,
  );
  await waitForSignal();
  if (registered) unregisterProxy(home);
  await router.close();
  await sim.close();
  const decisions = path.join(stateDir, 'decisions.jsonl');
  if (!existsSync(decisions)) {
    // Nothing reached the demo: nothing to keep.
    rmSync(stateDir, { recursive: true, force: true });
    return;
  }
  process.stdout.write(
    `Demo stopped. Its decisions stay in ${decisions}:\n` +
      `  node dist/cli.js report '${decisions}'\n  node dist/cli.js replay '${decisions}'\n` +
      `Delete ${stateDir} when you are done with them.\n`,
  );
}

/** `text` as one single-quoted POSIX shell word. */
function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
