/**
 * `claude-router simulate <decisions.jsonl>… [--policy FILE|NAME]… [--all] [--json]`: the what-if
 * simulator (src/whatif/, docs/whatif.md) on decision logs. The logs are streamed line by line,
 * never read whole; a line that is not a decision record is reported with its file and line number
 * and skipped. Exit codes: 0 done (a calibration warning included), 2 bad usage or input.
 */
import { createReadStream } from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { Command } from 'commander';
import { loadConfigFile } from '../config/load';
import { policyFrom } from '../config/schema';
import { readDecisionRecord } from '../routing/decisionRead';
import type { RoutingPolicy } from '../routing/policy';
import { compare } from '../whatif/compare';
import { formatSimulation, simulationOutput } from '../whatif/output';
import { catalogueNames, looksLikePolicyName, parsePolicyName, withPolicyName, type PolicyName } from '../whatif/policies';
import { WorkloadBuilder } from '../whatif/reconstruct';
import type { SimPolicy } from '../whatif/simulate';
import { UsageError } from './args';

/** Bad lines named one by one on stderr; past this only their count. */
const MAX_BAD_LINES_SHOWN = 5;

export interface SimulateOptions {
  /** `--policy`, in the order given: catalogue names or proxy-config.yaml files. */
  policy: string[];
  all?: boolean;
  json?: boolean;
  /** `--progress`: a `progress <done>/<total>` line on stderr after each replay (for the VS Code extension). */
  progress?: boolean;
}

/** A `--policy` value resolved: a catalogue name (applied to the log's own policy once it is read), or a file's policy. */
type PolicyArg = { name: string; catalogue: PolicyName } | { name: string; policy: RoutingPolicy };

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
      (v: string, all: string[]) => [...all, v],
      [],
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
  const started = performance.now();
  const args = await Promise.all(opts.policy.map(resolvePolicyArg));
  const builder = new WorkloadBuilder();
  const bad: string[] = [];
  let badLines = 0;
  for (const file of files) {
    await readLog(file, builder, (where, why) => {
      if (++badLines <= MAX_BAD_LINES_SHOWN) bad.push(`${where}: ${why}`);
    });
  }
  for (const b of bad) process.stderr.write(`claude-router: ${b}, skipped\n`);
  if (badLines) process.stderr.write(`claude-router: skipped ${badLines} line(s) that are not decision records\n`);
  let rec: ReturnType<WorkloadBuilder['finish']>;
  try {
    rec = builder.finish();
  } catch (err) {
    throw new UsageError(`nothing to simulate in ${files.join(', ')}: ${(err as Error).message}`);
  }
  const base = rec.workload.recordedPolicies[rec.workload.recordedPolicies.length - 1];
  const policies: SimPolicy[] = args.map((a) => ('catalogue' in a ? { name: a.name, policy: withPolicyName(base, a.catalogue) } : a));
  if (opts.all || policies.length === 0) {
    for (const name of catalogueNames()) if (!policies.some((p) => p.name === name)) policies.push({ name, policy: withPolicyName(base, parsePolicyName(name)) });
  }
  const cmp = compare(rec.workload, rec.actual, policies, opts.progress ? (done, total) => process.stderr.write(`progress ${done}/${total}\n`) : undefined);
  const out = simulationOutput(rec, cmp, performance.now() - started);
  process.stdout.write(opts.json ? JSON.stringify(out, null, 2) + '\n' : formatSimulation(out));
  if (rec.stats.usageEstimated === rec.stats.requests) process.stderr.write('claude-router: WARNING: no request of the log recorded its token usage: every token figure is 0\n');
  if (!out.calibration.ok) {
    process.stderr.write(
      `claude-router: WARNING: replaying the logged policy does not reproduce the log (${out.calibration.figures
        .filter((f) => !f.within)
        .map((f) => `${f.metric} ${f.simulated} vs ${f.actual}`)
        .join(', ')}); treat the comparison with caution\n`,
    );
  }
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

/**
 * Streams one log into `builder`, line by line.
 * @param onBad receives `file:line` and why, for each line that is not a decision record
 * @throws UsageError when the file cannot be read
 */
async function readLog(file: string, builder: WorkloadBuilder, onBad: (where: string, why: string) => void): Promise<void> {
  const stream = createReadStream(file, { encoding: 'utf8' });
  const opened = new Promise<void>((resolve, reject) => {
    stream.once('ready', () => resolve());
    stream.once('error', reject);
  });
  try {
    await opened;
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let n = 0;
  for await (const line of lines) {
    n++;
    if (!line.trim()) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      onBad(`${file}:${n}`, 'not JSON (a truncated or damaged line)');
      continue;
    }
    const record = readDecisionRecord(value);
    if (!record) {
      const v = (value as { schemaVersion?: unknown } | null)?.schemaVersion;
      onBad(`${file}:${n}`, v === undefined ? 'not a decision record' : `a record of schema version ${JSON.stringify(v)} (this version reads 1 and 2)`);
      continue;
    }
    try {
      builder.add(record);
    } catch (err) {
      onBad(`${file}:${n}`, `a malformed decision record (${(err as Error).message})`);
    }
  }
}
