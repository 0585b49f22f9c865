/**
 * "Try with Simulated Accounts": three simulated accounts behind a fake upstream, a demo policy
 * under the user's settings, and sample traffic, so a first-time user sees the router work —
 * sessions bind, bars fill, requests spread, one failover.
 *
 * - The accounts are the demo's (work 35 %/62 %, personal 10 %/20 %, team 80 %/40 % of their
 *   5-hour/weekly windows) with small windows (100,000 tokens in 5 hours, 1,000,000 a week), so a
 *   few conversations move the bars visibly.
 * - The demo policy: `headroom-first` with session affinity, so new conversations go to the account
 *   with the most headroom and stay there (with the default expiry-first every request would go to
 *   the account whose week ends first, and nothing would spread). The user's settings and config
 *   file override it, live; the panel names it as the source of the values it decides.
 * - Sample traffic: sampleTraffic.ts.
 */
import type { DefaultsLayer } from '../config/settingsPolicy';
import { DEMO_ACCOUNTS, type SimAccountSpec } from '../sim';

export const SIMULATED_ACCOUNTS: readonly SimAccountSpec[] = DEMO_ACCOUNTS.map((a) => ({ ...a, fiveHourLimitTokens: 100_000, sevenDayLimitTokens: 1_000_000 }));

export const SIMULATED_POLICY: DefaultsLayer = {
  values: { accountRanking: 'headroom-first', sessionAffinity: true },
  source: "simulated accounts' demo default",
};
