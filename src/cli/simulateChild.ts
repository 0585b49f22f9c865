/**
 * The what-if simulation as a child process of the VS Code extension (`dist/simulate.js`, so the
 * replay never runs on the extension host's thread): `node dist/simulate.js <decisions.jsonl>…`
 * compares the whole catalogue and prints the result as JSON, with a `progress <done>/<total>` line
 * on stderr after each replay and the warnings after it. Exit codes: 0 done, 2 nothing to simulate.
 */
import { SimulateInputError, simulateLogs } from './simulateRun';

simulateLogs(process.argv.slice(2), [], true, (done, total) => process.stderr.write(`progress ${done}/${total}\n`)).then(
  (run) => {
    process.stdout.write(JSON.stringify(run.output) + '\n');
    for (const w of run.warnings) process.stderr.write(`claude-router: ${w}\n`);
  },
  (err: unknown) => {
    process.stderr.write(`claude-router: ${(err as Error).message}\n`);
    process.exitCode = err instanceof SimulateInputError ? 2 : 1;
  },
);
