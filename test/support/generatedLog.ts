/**
 * Writes the decision log a policy would have written for a generated workload (src/whatif/generate.ts),
 * one JSON line per decision, exactly as the router's decision log writes it.
 */
import { writeFileSync } from 'node:fs';
import { DecisionLineEncoder } from '../../src/routing/decisionLine';
import type { RoutingPolicy } from '../../src/routing/policy';
import { WEEK_SHAPE, writeDecisionLog, type WorkloadShape } from '../../src/whatif/generate';
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

/**
 * Two days on two accounts in which a, 40 % used, resets after one day without serving: b (first in
 * order, a large allowance) serves everything under `sequential-drain`. The log has one weekly
 * reset, which left 60 % of a's week unused.
 */
export const ONE_RESET_SHAPE: WorkloadShape = {
  ...WEEK_SHAPE,
  days: 2,
  throttlesPerDay: 0,
  accounts: [
    { label: 'b', fiveHourLimitTokens: 50_000_000, sevenDayLimitTokens: 500_000_000, sevenDayUsed: 0.1, sevenDayResetInMs: 5 * 86_400_000 },
    { label: 'a', fiveHourLimitTokens: 1_500_000, sevenDayLimitTokens: 12_000_000, sevenDayUsed: 0.4, sevenDayResetInMs: 86_400_000 },
  ],
};
