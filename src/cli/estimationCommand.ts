/**
 * `claude-router estimation [--json]`: what the running proxy's cost leases believe now (its
 * `/estimation`): per model, whether its output is predicted, its p95, samples and undershoot
 * rate; per account, the estimated tokens the requests in flight reserve.
 */
import type { EstimationReport } from '../proxy/status/estimation';
import { estimationLines } from '../proxy/status/estimationView';
import { getJson, proxyTarget, type ProxyTargetOptions } from './proxyClient';

export interface EstimationOptions extends ProxyTargetOptions {
  json?: boolean;
}

/**
 * @returns 0
 * @throws Error (exit 1) when the proxy cannot be asked
 */
export async function runEstimation(values: EstimationOptions): Promise<number> {
  const report = await getJson<EstimationReport>(await proxyTarget(values), '/estimation');
  process.stdout.write(values.json ? JSON.stringify(report, null, 2) + '\n' : estimationLines(report).join('\n') + '\n');
  return 0;
}
