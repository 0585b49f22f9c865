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
 * - {@link startSimulatedRouter} builds their router (routerService.ts switches the proxy to it).
 */
import * as path from 'node:path';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import { MemoryCredentialStore } from '../accounts/memoryCredentialStore';
import type { AccountInfo } from '../accounts/types';
import type { DefaultsLayer } from '../config/settingsPolicy';
import { createRouter, type Router } from '../proxy/createRouter';
import type { Logger } from '../proxy/log';
import type { RoutingPolicy } from '../routing/policy';
import { DEMO_ACCOUNTS, startFakeUpstream, type FakeUpstream, type SimAccountSpec } from '../sim';

export const SIMULATED_ACCOUNTS: readonly SimAccountSpec[] = DEMO_ACCOUNTS.map((a) => ({ ...a, fiveHourLimitTokens: 100_000, sevenDayLimitTokens: 1_000_000 }));

export const SIMULATED_POLICY: DefaultsLayer = {
  values: { accountRanking: 'headroom-first', sessionAffinity: true },
  source: "simulated accounts' demo default",
};

/** A router over the simulated accounts and what it runs on; close the router, then the upstream. */
export interface SimulatedRouter {
  router: Router;
  /** The fake upstream the accounts live in. */
  upstream: FakeUpstream;
  accounts: AccountInfo[];
  /** A temporary folder of its own for the decision log. */
  decisionDir: string;
}

/**
 * Starts a fake upstream with the simulated accounts and a router over them under `policy`, its
 * decision log in a temporary folder; the poller has read every account once (utilisation shows at once).
 */
export async function startSimulatedRouter(opts: { policy: RoutingPolicy; sources: Record<string, string>; clientKey: string; log: Logger }): Promise<SimulatedRouter> {
  const decisionDir = mkdtempSync(path.join(os.tmpdir(), 'claude-router-simulated-'));
  const upstream = await startFakeUpstream({ accounts: [...SIMULATED_ACCOUNTS], sseIntervalMs: 15, sseDeltaCount: 12 });
  const store = new MemoryCredentialStore();
  for (const a of SIMULATED_ACCOUNTS) await store.set(a.label, { accessToken: a.accessToken, refreshToken: a.refreshToken, grantedAtMs: Date.now() }); // the demo's accounts are signed in as it starts
  const accounts: AccountInfo[] = SIMULATED_ACCOUNTS.map((a) => ({ label: a.label, kind: 'oauth', fallback: false, enabled: true }));
  const router = await createRouter({
    config: { policy: opts.policy, accounts, upstreamBaseUrl: upstream.url },
    sources: opts.sources,
    credentials: store,
    tokenUrl: upstream.tokenUrl,
    clientKey: opts.clientKey,
    log: opts.log,
    decisionDir,
  });
  for (let i = 0; i < accounts.length; i++) await router.poller.tick(); // show utilisation at once
  return { router, upstream, accounts, decisionDir };
}
