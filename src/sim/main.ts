/**
 * Command-line entry of the fake upstream (bundled as dist/sim.js):
 * `node dist/sim.js [--accounts N] [--port P] [--host H] [--deltas N] [--interval-ms MS] [--five-hour-limit TOKENS]
 * [--seven-day-limit TOKENS] [--max-records N]` (limits in tokens; the benchmarks pass limits too large to fill).
 * Prints `sim listening on URL`, then one JSON line `{url, tokenUrl, accounts:[{label, accessToken, refreshToken}]}`.
 * Stops on SIGINT/SIGTERM.
 */
import { parseArgs } from 'node:util';
import { startFakeUpstream } from './fakeUpstream';
import { simAccounts } from './presets';

function num(v: string | undefined, dflt: number): number {
  const n = v === undefined ? NaN : Number(v);
  return Number.isFinite(n) ? n : dflt;
}

const USAGE =
  'usage: node dist/sim.js [--accounts N] [--port P] [--host H] [--deltas N] [--interval-ms MS] [--five-hour-limit TOKENS] [--seven-day-limit TOKENS] [--max-records N]\n';

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(USAGE);
    return;
  }
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      accounts: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      deltas: { type: 'string' },
      'interval-ms': { type: 'string' },
      'five-hour-limit': { type: 'string' },
      'seven-day-limit': { type: 'string' },
      'max-records': { type: 'string' },
    },
  });
  const fiveHour = values['five-hour-limit'];
  const sevenDay = values['seven-day-limit'];
  const accounts = simAccounts(num(values.accounts, 3), {
    ...(fiveHour ? { fiveHourLimitTokens: num(fiveHour, 2_000_000) } : {}),
    ...(sevenDay ? { sevenDayLimitTokens: num(sevenDay, 20_000_000) } : {}),
  });
  const sim = await startFakeUpstream({
    accounts,
    host: values.host ?? '127.0.0.1',
    port: num(values.port, 0),
    sseDeltaCount: num(values.deltas, 3),
    sseIntervalMs: num(values['interval-ms'], 0),
    ...(values['max-records'] ? { maxRecords: num(values['max-records'], 10_000) } : {}),
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
  process.stderr.write(`sim failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
