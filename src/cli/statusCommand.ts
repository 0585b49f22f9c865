/**
 * `claude-router status`: asks a running proxy for `/status` (with the local
 * key from the state directory, sent only after the holder of the port proved
 * it knows the key: src/proxy/http/identity.ts) and prints the pool as a table.
 */
import type { AccountOrigin } from '../accounts/types';
import type { StatusReport } from '../proxy/status/status';
import { getJson, proxyTarget, type ProxyTargetOptions } from './proxyClient';
import { eligibilityText, timeUntil } from '../proxy/status/statusView';
import { formatDuration } from '../quota/duration';

const pct = (f: number | null) => (f === null ? '   ?' : `${Math.round(f * 100)}%`.padStart(4));

/** Renders a status report as a fixed-width table (labels and numbers only). */
export function formatStatusTable(s: StatusReport, now = Date.now()): string {
  // STATUS: the account's own state; ELIGIBILITY: the filter's verdict for a typical new request.
  // SOURCE: where the account and its settings come from, when the proxy knows (a CLI proxy does).
  const sources = s.accounts.some((a) => a.origin);
  const rows = [['ACCOUNT', 'STATE', 'STATUS', ...(sources ? ['SOURCE'] : []), '5H', 'RESET', '7D', 'RESET', 'IN-FLIGHT', 'SESSIONS', 'ELIGIBILITY', 'NOTE']];
  for (const a of s.accounts) {
    const state = !a.enabled ? 'disabled' : a.needsSignIn ? 'sign-in' : a.coolingUntil ? 'cooling' : a.usable ? 'usable' : (a.unusableReason ?? 'unusable');
    const note = [
      a.primary ? 'primary' : '',
      a.fallback ? 'fallback' : '',
      a.coolingUntil ? `${a.coolingReason} ${timeUntil(a.coolingUntil, now)}` : '',
      a.evidence.freshness !== 'fresh' ? `quota ${a.evidence.freshness}` : '',
    ]
      .filter(Boolean)
      .join(', ');
    rows.push([
      a.label,
      state,
      a.status,
      ...(sources ? [originText(a.origin)] : []),
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
    `policy: ${p.strategy}, ${p.accountRanking}${p.primaryAccount === undefined ? '' : `, primary ${p.primaryAccount} (${s.config.sources['primary-account'] ?? 'default'})`}${p.sessionAffinity ? `, affinity ${formatDuration(p.sessionAffinityIdleTtlMs / 1000)}` : ''}${p.preferPrimary ? ', prefer-primary' : ''}${p.spillInflight ? `, spill at ${p.spillInflight}` : ''}`,
    `usable accounts: ${s.usableAccounts}/${s.accounts.filter((a) => !a.fallback).length}; bound sessions: ${s.boundSessions}; in flight: ${s.inflight}`,
    `config generation ${s.config.generation}${s.config.lastReloadError ? `; last reload rejected: ${s.config.lastReloadError}` : ''}`,
    `requests ${s.counters.requests}, served ${s.counters.served}, failovers ${s.counters.failovers}, no usable account ${s.counters.noUsableAccount}`,
  );
  return lines.join('\n') + '\n';
}

/**
 * Where an account and its settings come from, shortly: `config`, `state-dir`, or the account's
 * source with the settings that come from elsewhere (`config; enabled: state-dir`); empty when unknown.
 */
export function originText(o: AccountOrigin | null): string {
  if (!o) return '';
  const other = (
    [
      ['enabled', o.enabled],
      ['order', o.position],
    ] as const
  ).filter(([, src]) => src !== 'default' && src !== o.account);
  return [o.account, ...other.map(([k, src]) => `${k}: ${src}`)].join('; ');
}

/** `status`'s options. */
export interface StatusOptions extends ProxyTargetOptions {
  json?: boolean;
}

export async function runStatus(values: StatusOptions): Promise<number> {
  const report = await getJson<StatusReport>(await proxyTarget(values), '/status');
  process.stdout.write(values.json ? JSON.stringify(report, null, 2) + '\n' : formatStatusTable(report));
  return 0;
}
