/**
 * The fake Anthropic upstream of the benchmarks: src/sim's startFakeUpstream (the same server
 * as `node dist/sim.js`) with windows too large to fill during a run (so every target sees
 * only 200s and the proxy never rotates) and a bounded request log (so the sim's memory and GC
 * stay flat over hundreds of thousands of requests). Its own process.
 *
 *   node out/bench/upstream.js --accounts N --deltas D --interval-ms MS
 *
 * Prints `sim listening on URL`, then `{url, tokenUrl, accounts:[{label, accessToken, refreshToken}]}`.
 */
import { simAccounts, startFakeUpstream } from '../src/sim';
import { argValue } from './common';

async function main(argv: string[]): Promise<void> {
  const huge = 1e15; // tokens: never reached
  const accounts = simAccounts(Number(argValue(argv, 'accounts', '3')), { fiveHourLimitTokens: huge, sevenDayLimitTokens: huge });
  const sim = await startFakeUpstream({
    accounts,
    host: '127.0.0.1',
    port: 0,
    sseDeltaCount: Number(argValue(argv, 'deltas', '19')),
    sseIntervalMs: Number(argValue(argv, 'interval-ms', '0')),
    maxRecords: 1_000,
  });
  process.stdout.write(`sim listening on ${sim.url}\n`);
  const tokens = accounts.map((a) => ({ label: a.label, accessToken: a.accessToken, refreshToken: a.refreshToken }));
  process.stdout.write(`${JSON.stringify({ url: sim.url, tokenUrl: sim.tokenUrl, accounts: tokens })}\n`);
  const stop = (): void => {
    void sim.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main(process.argv.slice(2)).catch((e: unknown) => {
  process.stderr.write(`bench upstream failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
