/**
 * `GET /api/oauth/usage`: an OAuth account's windows as the usage endpoint reports them
 * (utilisation in percent, resets as ISO-8601).
 */
import type { Exchange } from '../http';
import type { UsageWindow } from '../windows';
import type { SimHost } from './host';
import { accountHeaders, authenticate } from './request';

/** Answers one usage-endpoint request: 401 for an API-key account, 403 where the account has no usage endpoint. */
export function usage(host: SimHost, ex: Exchange): void {
  const auth = authenticate(host, ex, false);
  if (!auth.ok) return;
  const a = auth.account;
  if (a.apiKey) return ex.error(401, 'authentication_error', 'OAuth authentication is required for this endpoint.');
  if (!a.usageEndpoint) return ex.error(403, 'permission_error', 'OAuth token does not meet scope requirement user:profile');
  a.roll(host.now());
  const view = (w: UsageWindow | undefined): { utilization: number; resets_at: string | null } | null =>
    w ? { utilization: Number((w.utilization * 100).toFixed(2)), resets_at: w.resetAtMs === null ? null : new Date(w.resetAtMs).toISOString() } : null;
  const out: Record<string, unknown> = {
    five_hour: view(a.fiveHour),
    seven_day: view(a.sevenDay),
    seven_day_oauth_apps: null,
    seven_day_opus: view(a.window('7d_opus')),
    seven_day_sonnet: view(a.window('7d_sonnet')),
  };
  for (const w of a.scoped) out[w.name.replace(/^7d_/, 'seven_day_')] = view(w);
  out.extra_usage = { is_enabled: false, monthly_limit: null, used_credits: null, utilization: null };
  ex.json(200, out, accountHeaders(a));
}
