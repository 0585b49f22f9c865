/**
 * `claude-router accounts reset-cooldown <label>`: asks the running proxy to lift an account's
 * cooldown (account-wide and model-scoped) and forget its failed recovery probes, through
 * `POST /accounts/<label>/reset-cooldown` with the local key (sent only after the holder of the
 * port proved it knows it: src/proxy/http/identity.ts). The proxy logs the reset.
 */
import type { Command } from 'commander';
import { postToRouter } from '../proxy/http/identity';
import type { ResetCooldownAnswer } from '../proxy/pipeline/localEndpoints';
import { UsageError } from './args';
import { addProxyOptions, example } from './help';
import { proxyTarget, type ProxyTargetOptions } from './proxyClient';

/**
 * Resets `label`'s cooldown in the running proxy and says what was lifted.
 * @returns 0 when reset, 1 when no proxy could be asked or it failed
 * @throws UsageError when the proxy has no account of that name (exit 2)
 */
export async function runResetCooldown(label: string, values: ProxyTargetOptions): Promise<number> {
  const { url, key } = await proxyTarget(values);
  let answer: { statusCode: number; text: string };
  try {
    answer = await postToRouter(url, key, `/accounts/${encodeURIComponent(label)}/reset-cooldown`, { timeoutMs: 5_000 });
  } catch (err) {
    process.stderr.write(`claude-router: ${(err as Error).message}\n`);
    return 1;
  }
  if (answer.statusCode === 404) throw new UsageError(`the running proxy has no account named ${JSON.stringify(label)}`);
  if (answer.statusCode !== 200) {
    process.stderr.write(`claude-router: ${url} answered ${answer.statusCode}: ${answer.text}\n`);
    return 1;
  }
  const r = JSON.parse(answer.text) as ResetCooldownAnswer;
  const lifted = [r.cooldown ? `${r.cooldown.replace(/_/g, ' ')} cooldown until ${r.cooldownUntil}` : '', ...r.scopedFamilies.map((f) => `${f} weekly cooldown`)].filter(Boolean);
  process.stdout.write(`"${r.account}": ${lifted.length ? `lifted the ${lifted.join(', ')}` : 'no cooldown was running'}`);
  process.stdout.write(r.droppedEvidence ? '; its quota data showed a rejected window and is read again\n' : '\n');
  return 0;
}

/** Adds `reset-cooldown` under `accounts`; `done(code)` receives its exit code. */
export function registerResetCooldown(accounts: Command, done: (code: number) => void): void {
  addProxyOptions(
    accounts
      .command('reset-cooldown')
      .summary("lift an account's cooldown in the running proxy")
      .description(
        "Lift an account's cooldown (and its model-scoped ones) in the running proxy, and forget its failed re-checks: its next request tries it again. For an account you know has recovered (an early reset).",
      )
      .argument('<label>', 'the account'),
  )
    .addHelpText('after', example('claude-router accounts reset-cooldown work'))
    .action(async (label: string, _opts: unknown, cmd: Command) => done(await runResetCooldown(label, cmd.optsWithGlobals<ProxyTargetOptions & Record<string, unknown>>())));
}
