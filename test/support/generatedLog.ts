/**
 * Writes the decision log a policy would have written for a generated workload (src/whatif/generate.ts),
 * one JSON line per decision, exactly as the router's decision log writes it.
 */
import { writeFileSync } from 'node:fs';
import { DecisionLineEncoder } from '../../src/routing/decisionLine';
import type { RoutingPolicy } from '../../src/routing/policy';
import { writeDecisionLog } from '../../src/whatif/generate';
import type { SimulationResult } from '../../src/whatif/simulate';
import type { Workload } from '../../src/whatif/workload';

/** The log's lines and the run's result (what the log shows happened). */
export function generatedLog(workload: Workload, policy: RoutingPolicy): { lines: string[]; result: SimulationResult } {
  const encoder = new DecisionLineEncoder();
  const lines: string[] = [];
  const result = writeDecisionLog(workload, policy, (r) => lines.push(encoder.encode(r)));
  return { lines, result };
}

/** Writes the log to `file` and returns the run's result. */
export function writeGeneratedLog(file: string, workload: Workload, policy: RoutingPolicy): SimulationResult {
  const { lines, result } = generatedLog(workload, policy);
  writeFileSync(file, lines.join('\n') + '\n');
  return result;
}
