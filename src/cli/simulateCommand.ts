/**
 * `claude-router simulate <decisions.jsonl>… [--policy FILE|NAME]… [--all] [--json]`: the what-if
 * simulator (src/whatif/, docs/whatif.md) on decision logs. The logs are streamed line by line,
 * never read whole; a line that is not a decision record is reported with its file and line number
 * and skipped. Exit codes: 0 done (a calibration warning included), 2 bad usage or input.
 */
import * as path from 'node:path';
import type { Command } from 'commander';
import { loadConfigFile } from '../config/load';
import { policyFrom } from '../config/schema';
import { formatSimulation } from '../whatif/output';
import { catalogueNames, looksLikePolicyName, parsePolicyName } from '../whatif/policies';
import { UsageError } from './args';
import { terminalWidth } from './color';
import { SimulateInputError, simulateLogs, type PolicyArg, type SimulateRun } from './simulateRun';

export interface SimulateOptions {
  /** `--policy`, in the order given: catalogue names or proxy-config.yaml files. */
  policy?: string[];
  all?: boolean;
  json?: boolean;
  /** `--progress`: a `progress <done>/<total>` line on stderr after each replay (for the VS Code extension). */
  progress?: boolean;
}

/** Adds the `simulate` command to `program`; `done(code)` receives its exit code. */
export function registerSimulate(program: Command, done: (code: number) => void): void {
  program
    .command('simulate')
    .summary('replay decision logs under other routing policies (what-if)')
    .description(
      'Replay the traffic of decision logs in virtual time under other routing policies, with the real planner, and print the rollout metrics of each side by side with what actually happened. A policy is a catalogue name (strategy[:ranking], applied to the logged policy) or a proxy-config.yaml whose routing keys are used. Without --policy: every policy of the catalogue.',
    )
    .argument('<decisions.jsonl...>', 'decision logs (version 1 or 2)')
    .option(
      '--policy <file|name>',
      'a policy to compare: strategy[:ranking] (e.g. fill-first:headroom-first) or a proxy-config.yaml (repeatable)',
      (v: string, all: string[] | undefined) => [...(all ?? []), v],
    )
    .option('--all', 'every policy of the catalogue (each strategy; fill-first under both rankings)')
    .option('--json', 'the whole result as JSON')
    .option('--progress', 'a progress line on stderr after each replay')
    .addHelpText(
      'after',
      `\nExit codes: 0 done (also when the calibration warns), 2 bad usage or input.\n\nExamples:\n  $ claude-router simulate ~/.config/claude-router/decisions.jsonl\n  $ claude-router simulate decisions*.jsonl --policy fill-first:headroom-first --policy suggested.yaml\n`,
    )
    .action(async (files: string[], opts: SimulateOptions) => done(await runSimulate(files, opts)));
}

/** Runs the command; returns its exit code. @throws UsageError (exit 2) for bad usage or input */
export async function runSimulate(files: readonly string[], opts: SimulateOptions): Promise<number> {
  const args = await Promise.all((opts.policy ?? []).map(resolvePolicyArg));
  let run: SimulateRun;
  try {
    run = await simulateLogs(files, args, opts.all === true, opts.progress ? (done, total) => process.stderr.write(`progress ${done}/${total}\n`) : undefined);
  } catch (err) {
    if (err instanceof SimulateInputError) throw new UsageError(err.message);
    throw err;
  }
  process.stdout.write(opts.json ? JSON.stringify(run.output, null, 2) + '\n' : formatSimulation(run.output, terminalWidth(process.stdout)));
  for (const w of run.warnings) process.stderr.write(`claude-router: ${w}\n`);
  return 0;
}

/** A `--policy` value → a catalogue name or a file's policy. @throws UsageError naming the value and the problem */
async function resolvePolicyArg(value: string): Promise<PolicyArg> {
  if (looksLikePolicyName(value)) {
    try {
      return { name: value, catalogue: parsePolicyName(value) };
    } catch (err) {
      throw new UsageError(`--policy ${value}: ${(err as Error).message}`);
    }
  }
  const loaded = await loadConfigFile(value);
  if (!loaded.ok) {
    const missing = /: (ENOENT|EISDIR|EACCES)$/.test(loaded.error);
    throw new UsageError(
      missing ? `--policy ${value}: neither a strategy of the catalogue (${catalogueNames().join(', ')}) nor a readable file (${loaded.error})` : `--policy ${loaded.error}`,
    );
  }
  return { name: path.basename(value), policy: policyFrom(loaded.config.routing, process.env) };
}
