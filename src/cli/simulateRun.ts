/**
 * The what-if simulation over decision log files (src/whatif/, docs/whatif.md): the logs streamed
 * line by line into the workload builder (never read whole), the policies compared, and what to
 * say on standard error. Shared by `claude-router simulate` (simulateCommand.ts) and the VS Code
 * extension's child process (simulateChild.ts); it loads no configuration, so the child stays small.
 */
import { performance } from 'node:perf_hooks';
import { readDecisionRecord } from '../routing/decisionRead';
import type { LogLine } from '../routing/logLines';
import type { RoutingPolicy } from '../routing/policy';
import { compare } from '../whatif/compare';
import { simulationOutput, type SimulationOutput } from '../whatif/output';
import { catalogueNames, parsePolicyName, withPolicyName, type PolicyName } from '../whatif/policies';
import { WorkloadBuilder } from '../whatif/reconstruct';
import type { SimPolicy } from '../whatif/simulate';
import { LogReadError, readLogLines, tooLongText } from './logFile';

/** Bad lines named one by one; past this only their count. */
const MAX_BAD_LINES_SHOWN = 5;

/** Input the simulation cannot use (a file that cannot be read, nothing to replay): exit 2. */
export class SimulateInputError extends Error {}

/** A policy to compare: a catalogue name (applied to the log's own policy once it is read), or a whole policy. */
export type PolicyArg = { name: string; catalogue: PolicyName } | { name: string; policy: RoutingPolicy };

export interface SimulateRun {
  output: SimulationOutput;
  /** Lines for standard error, without a prefix: the bad lines, the warnings. */
  warnings: string[];
}

/**
 * Reads `files` and compares the log's own policy with `policies` (with every catalogue policy
 * too when `all`, or when `policies` is empty).
 * @param onProgress called after each replay
 * @throws SimulateInputError when a file cannot be read or the logs hold nothing to replay
 */
export async function simulateLogs(
  files: readonly string[],
  policies: readonly PolicyArg[],
  all: boolean,
  onProgress?: (done: number, total: number) => void,
): Promise<SimulateRun> {
  const started = performance.now();
  const builder = new WorkloadBuilder();
  const warnings: string[] = [];
  let badLines = 0;
  for (const file of files) {
    await readLog(file, builder, (where, why) => {
      if (++badLines <= MAX_BAD_LINES_SHOWN) warnings.push(`${where}: ${why}, skipped`);
    });
  }
  if (badLines) warnings.push(`skipped ${badLines} line(s) that are not decision records`);
  let rec: ReturnType<WorkloadBuilder['finish']>;
  try {
    rec = builder.finish();
  } catch (err) {
    throw new SimulateInputError(`nothing to simulate in ${files.join(', ')}: ${(err as Error).message}`);
  }
  const base = rec.workload.recordedPolicies[rec.workload.recordedPolicies.length - 1];
  const sims: SimPolicy[] = policies.map((a) => ('catalogue' in a ? { name: a.name, policy: withPolicyName(base, a.catalogue) } : a));
  if (all || sims.length === 0) {
    for (const name of catalogueNames()) if (!sims.some((p) => p.name === name)) sims.push({ name, policy: withPolicyName(base, parsePolicyName(name)) });
  }
  const cmp = compare(rec.workload, rec.actual, sims, onProgress);
  const output = simulationOutput(rec, cmp, performance.now() - started);
  if (rec.stats.usageEstimated === rec.stats.requests) warnings.push('WARNING: no request of the log recorded its token usage: every token figure is 0');
  if (!output.calibration.ok) {
    const off = output.calibration.figures.filter((f) => !f.within).map((f) => `${f.metric} ${f.simulated} vs ${f.actual}`);
    warnings.push(`WARNING: replaying the logged policy does not reproduce the log (${off.join(', ')}); treat the comparison with caution`);
  }
  return { output, warnings };
}

/**
 * Streams one log into `builder`, line by line (each capped: see src/routing/logLines.ts).
 * @param onBad receives `file:line` and why, for each line that is not a decision record
 * @throws SimulateInputError when the file cannot be read
 */
async function readLog(file: string, builder: WorkloadBuilder, onBad: (where: string, why: string) => void): Promise<void> {
  try {
    for await (const line of readLogLines(file)) readLine(line, `${file}:${line.n}`, builder, onBad);
  } catch (err) {
    if (err instanceof LogReadError) throw new SimulateInputError(err.message);
    throw err;
  }
}

/** One line of a log into `builder`, or why it is not a decision record into `onBad`. */
function readLine(line: LogLine, where: string, builder: WorkloadBuilder, onBad: (where: string, why: string) => void): void {
  if (line.text === null) return onBad(where, tooLongText(line));
  if (!line.text.trim()) return;
  let value: unknown;
  try {
    value = JSON.parse(line.text);
  } catch {
    return onBad(where, 'not JSON (a truncated or damaged line)');
  }
  const record = readDecisionRecord(value);
  if (!record) {
    const v = (value as { schemaVersion?: unknown } | null)?.schemaVersion;
    return onBad(where, v === undefined ? 'not a decision record' : `a record of schema version ${JSON.stringify(v)} (this version reads 1 and 2)`);
  }
  try {
    builder.add(record);
  } catch (err) {
    onBad(where, `a malformed decision record (${(err as Error).message})`);
  }
}
