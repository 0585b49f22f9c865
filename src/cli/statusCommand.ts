/**
 * `claude-router status`: asks a running proxy for `/status` (with the local
 * key from the state directory, sent only after the holder of the port proved
 * it knows the key: src/proxy/http/identity.ts) and prints the pool as a table.
 */
import { DEFAULT_SERVER_SETTINGS } from '../config/schema';
import type { StatusReport } from '../proxy/status/status';
import { fetchFromRouter } from '../proxy/http/identity';
import { configFromArgs, UsageError } from './args';
import { stateDirOf } from './runtime';
import { readClientKey, runningProxyUrl } from './stateDir';
import { concurrencyText, eligibilityText, timeUntil } from '../proxy/status/statusView';
import { formatDuration } from '../quota/duration';

const pct = (f: number | null) => (f === null ? '   ?' : `${Math.round(f * 100)}%`.padStart(4));

/** Renders a status report as a fixed-width table (labels and numbers only). */
export function formatStatusTable(s: StatusReport, now = Date.now()): string {
  // STATUS: the account's own state; ELIGIBILITY: the filter's verdict for a typical new request.
  const rows = [['ACCOUNT', 'STATE', 'STATUS', '5H', 'RESET', '7D', 'RESET', 'IN-FLIGHT', 'SESSIONS', 'ELIGIBILITY', 'NOTE']];
  for (const a of s.accounts) {
    const state = !a.enabled ? 'disabled' : a.needsSignIn ? 'sign-in' : a.coolingUntil ? 'cooling' : a.usable ? 'usable' : (a.unusableReason ?? 'unusable');
    const note = [
      a.primary ? 'primary' : '',
      a.fallback ? 'fallback' : '',
      a.coolingUntil ? `${a.coolingReason} ${timeUntil(a.coolingUntil, now)}` : '',
      a.evidence.freshness !== 'fresh' ? `quota ${a.evidence.freshness}` : '',
      concurrencyText(a),
    ]
      .filter(Boolean)
      .join(', ');
    rows.push([
      a.label,
      state,
      a.status,
      pct(a.session.used),
      timeUntil(a.session.resetsAt, now),
      pct(a.weekly.used),
      timeUntil(a.weekly.resetsAt, now),
      String(a.inflight),
      String(a.boundSessions),
      eligibilityText(a, now),
      note,
    ]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = rows.map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd(),
  );
  const p = s.policy;
  lines.push(
    '',
    `policy: ${p.strategy}, ${p.accountRanking}${p.sessionAffinity ? `, affinity ${formatDuration(p.sessionAffinityIdleTtlMs / 1000)}` : ''}${p.preferPrimary ? ', prefer-primary' : ''}${p.spillInflight ? `, spill at ${p.spillInflight}` : ''}`,
    `usable accounts: ${s.usableAccounts}/${s.accounts.filter((a) => !a.fallback).length}; bound sessions: ${s.boundSessions}; in flight: ${s.inflight}`,
    `config generation ${s.config.generation}${s.config.lastReloadError ? `; last reload rejected: ${s.config.lastReloadError}` : ''}`,
    `requests ${s.counters.requests}, served ${s.counters.served}, failovers ${s.counters.failovers}, no usable account ${s.counters.noUsableAccount}`,
  );
  return lines.join('\n') + '\n';
}

export async function runStatus(values: { config?: string; json?: boolean; url?: string; key?: string }): Promise<number> {
  const { config } = await configFromArgs(values.config);
  const dir = stateDirOf(config);
  // Reading status never creates a key: a missing one means the wrong state directory.
  const key = values.key ?? process.env.CLAUDE_ROUTER_KEY ?? config.clientKey ?? readClientKey(dir);
  if (!key) throw new UsageError(`no client key in ${dir}; pass --config <file> of the running proxy, or set CLAUDE_ROUTER_KEY`);
  const host = config.listen?.host ?? DEFAULT_SERVER_SETTINGS.host;
  const url = values.url ?? runningProxyUrl(dir) ?? `http://${host.includes(':') ? `[${host}]` : host}:${config.listen?.port ?? DEFAULT_SERVER_SETTINGS.port}`;
  let res;
  try {
    [res] = await fetchFromRouter(url, key, ['/status'], { timeoutMs: 5_000 });
  } catch (err) {
    // "nothing listens at …", or a holder of the port that could not prove it is the router (it got no key).
    process.stderr.write(`claude-router: ${(err as Error).message}\n`);
    return 1;
  }
  const text = res.text;
  if (res.statusCode !== 200) {
    process.stderr.write(`claude-router: ${url}/status answered ${res.statusCode}: ${text}\n`);
    return 1;
  }
  const report = JSON.parse(text) as StatusReport;
  process.stdout.write(values.json ? JSON.stringify(report, null, 2) + '\n' : formatStatusTable(report));
  return 0;
}
