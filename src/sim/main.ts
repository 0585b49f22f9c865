/**
 * Command-line entry: `node out/src/sim/main.js [--accounts N] [--port P] [--host H]
 * [--deltas N] [--interval-ms MS] [--five-hour-limit TOKENS]` (env: SIM_ACCOUNTS, SIM_PORT,
 * SIM_HOST, SIM_DELTAS, SIM_INTERVAL_MS, SIM_FIVE_HOUR_LIMIT). Prints `sim listening on URL`,
 * then one JSON line `{url, tokenUrl, accounts:[{label, accessToken, refreshToken}]}`.
 * Stops on SIGINT/SIGTERM.
 */
import { startFakeUpstream } from './fakeUpstream';
import type { SimAccountSpec } from './types';

/** `n` OAuth account specs labelled `acct1`…`acctN` with deterministic tokens. */
export function simAccounts(n: number, extra: Partial<SimAccountSpec> = {}): SimAccountSpec[] {
  return Array.from({ length: n }, (_, i) => ({
    label: `acct${i + 1}`,
    accessToken: `sk-ant-oat01-sim-acct${i + 1}-0`,
    refreshToken: `sk-ant-ort01-sim-acct${i + 1}-0`,
    ...extra,
  }));
}

function arg(argv: string[], name: string, env: string): string | undefined {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : process.env[env];
}

function num(v: string | undefined, dflt: number): number {
  const n = v === undefined ? NaN : Number(v);
  return Number.isFinite(n) ? n : dflt;
}

async function main(argv: string[]): Promise<void> {
  const limit = arg(argv, 'five-hour-limit', 'SIM_FIVE_HOUR_LIMIT');
  const accounts = simAccounts(num(arg(argv, 'accounts', 'SIM_ACCOUNTS'), 3), limit ? { fiveHourLimitTokens: num(limit, 2_000_000) } : {});
  const sim = await startFakeUpstream({
    accounts,
    host: arg(argv, 'host', 'SIM_HOST') ?? '127.0.0.1',
    port: num(arg(argv, 'port', 'SIM_PORT'), 0),
    sseDeltaCount: num(arg(argv, 'deltas', 'SIM_DELTAS'), 3),
    sseIntervalMs: num(arg(argv, 'interval-ms', 'SIM_INTERVAL_MS'), 0),
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

if (require.main === module) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    process.stderr.write(`sim failed: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}
