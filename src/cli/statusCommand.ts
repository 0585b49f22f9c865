/**
 * `claude-router status`: asks a running proxy for `/status` (with the local
 * key from the state directory, sent only after the holder of the port proved
 * it knows the key: src/proxy/http/identity.ts) and prints the pool as a table,
 * with why each account would or would not be picked now (`--watch`: watchCommand.ts).
 */
import type { AccountOrigin } from '../accounts/types';
import type { AccountStatus, StatusReport } from '../proxy/status/status';
import { getJson, proxyTarget, type ProxyTargetOptions } from './proxyClient';
import { concurrencyText, eligibilityText, explainReason, grantCell, grantWarning, storeText, timeUntil, warmUpText, whyNow } from '../proxy/status/statusView';
import { PLAIN, paintFor, type Paint } from './color';
import { formatDuration } from '../quota/duration';
import { fitTable, wrapText } from '../routing/textFit';
import { terminalWidth } from './color';

const pct = (f: number | null) => (f === null ? '   ?' : `${Math.round(f * 100)}%`.padStart(4));

/** Cells of this width draw a utilisation bar. */
const BAR_CELLS = 10;
/** `f` (a fraction) as a bar of BAR_CELLS cells, `··········` when unknown. */
const bar = (f: number | null) => (f === null ? '·'.repeat(BAR_CELLS) : '█'.repeat(Math.round(Math.min(1, Math.max(0, f)) * BAR_CELLS)).padEnd(BAR_CELLS, '░'));

/** The colour of an account's displayed status. */
function statusPaint(status: AccountStatus, paint: Paint): (text: string) => string {
  switch (status) {
    case 'Active':
      return paint.green;
    case 'Limited':
    case 'Paused':
      return paint.yellow;
    case 'Needs sign-in':
      return paint.red;
    case 'Disabled':
      return paint.dim;
  }
}

/** How {@link formatStatusTable} draws. */
export interface TableOptions {
  /** Colours (default none). */
  paint?: Paint;
  /** A bar beside the 5h and 7d utilisation (the live view). */
  bars?: boolean;
  /** Fit to this many columns (terminalWidth): a wider table is split into blocks of columns, long lines wrapped. Default: no limit. */
  width?: number;
}

/**
 * Renders a status report as a fixed-width table (labels and numbers only), the policy and
 * counters, and why the router would or would not pick each account for a new request now.
 */
export function formatStatusTable(s: StatusReport, now = Date.now(), opts: TableOptions = {}): string {
  const paint = opts.paint ?? PLAIN;
  const used = (f: number | null) => (opts.bars ? `${pct(f)} ${bar(f)}` : pct(f));
  // STATUS: the account's own state; ELIGIBILITY: the filter's verdict for a typical new request.
  // SOURCE: where the account and its settings come from, when the proxy knows (a CLI proxy does).
  // SIGNED IN: the OAuth grant's age, when the proxy reports one (an older proxy does not).
  const sources = s.accounts.some((a) => a.origin);
  const grants = s.accounts.some((a) => a.grant);
  const rows = [
    ['ACCOUNT', 'STATE', 'STATUS', ...(sources ? ['SOURCE'] : []), '5H', 'RESET', '7D', 'RESET', 'IN-FLIGHT', 'SESSIONS', 'ELIGIBILITY', ...(grants ? ['SIGNED IN'] : []), 'NOTE'],
  ];
  for (const a of s.accounts) {
    const state = !a.enabled ? 'disabled' : a.needsSignIn ? 'sign-in' : a.coolingUntil ? 'cooling' : a.usable ? 'usable' : (a.unusableReason?.replace(/_/g, ' ') ?? 'unusable');
    const note = [
      a.primary ? 'primary' : '',
      a.fallback ? 'fallback' : '',
      a.coolingUntil ? `${a.coolingReason?.replace(/_/g, ' ') ?? 'cooling'} ${timeUntil(a.coolingUntil, now)}` : '',
      a.recheck?.state === 'backing_off' ? `re-check failed, next in ${timeUntil(a.recheck.nextAt, now)}` : a.recheck ? 'reads recovered, re-checking' : '',
      a.evidence.freshness !== 'fresh' ? `quota ${a.evidence.freshness}` : '',
      concurrencyText(a),
      warmUpText(a, now),
    ]
      .filter(Boolean)
      .join(', ');
    rows.push([
      a.label,
      state,
      a.status,
      ...(sources ? [originText(a.origin)] : []),
      used(a.session.used),
      timeUntil(a.session.resetsAt, now),
      used(a.weekly.used),
      timeUntil(a.weekly.resetsAt, now),
      String(a.inflight),
      String(a.boundSessions),
      eligibilityText(a, now),
      ...(grants ? [grantCell(a) || '-'] : []),
      note,
    ]);
  }
  const statusColumn = 2;
  const eligibilityColumn = rows[0].indexOf('ELIGIBILITY');
  const width = opts.width ?? Infinity;
  // Padded first, coloured after: escape codes take no room on the screen.
  const lines = fitTable(rows, width, {
    paint: (row, i, cell) => {
      if (row === 0) return paint.bold(cell);
      const a = s.accounts[row - 1];
      if (i === statusColumn) return statusPaint(a.status, paint)(cell);
      if (i === eligibilityColumn) return (a.eligibility?.code === 'eligible' ? paint.green : paint.yellow)(cell);
      return cell;
    },
  });
  const labelWidth = Math.max(...s.accounts.map((a) => a.label.length));
  lines.push(...grantWarnings(s, labelWidth, width).map(paint.yellow));
  // In the order a new request would try them (the text says "ranked 2nd"); disabled accounts last.
  const rank = (label: string) => s.preview.verdicts.find((v) => v.account === label)?.rank ?? Number.MAX_SAFE_INTEGER;
  const byTryOrder = [...s.accounts].sort((a, b) => rank(a.label) - rank(b.label));
  lines.push('', 'why:', ...byTryOrder.flatMap((a) => wrapText(`  ${a.label.padEnd(labelWidth)}  ${whyNow(a, s, now)}`, width, labelWidth + 4)));
  // A model-scoped limit can send one family's new sessions elsewhere: say where.
  for (const [family, fp] of Object.entries(s.familyPreviews ?? {})) {
    const v = fp.verdicts.find((x) => x.verdict === 'selected');
    const a = v && s.accounts.find((x) => x.label === v.account);
    if (v && a?.usable) lines.push(...wrapText(`  a new ${family} session would go to ${v.account}: ${explainReason(v.reason)}.`, width, 4));
  }
  const p = s.policy;
  const tail = [
    '',
    `policy: ${p.strategy}, ${p.accountRanking}${p.primaryAccount === undefined ? '' : `, primary ${p.primaryAccount} (${s.config.sources['primary-account'] ?? 'default'})`}${p.sessionAffinity ? `, affinity ${formatDuration(p.sessionAffinityIdleTtlMs / 1000)}` : ''}${p.preferPrimary ? ', prefer-primary' : ''}${p.spillInflight ? `, spill at ${p.spillInflight}` : ''}`,
    `usable accounts: ${s.usableAccounts}/${s.accounts.filter((a) => !a.fallback).length}; bound sessions: ${s.boundSessions}; in flight: ${s.inflight}`,
    `config generation ${s.config.generation}${s.config.lastReloadError ? `; last reload rejected: ${s.config.lastReloadError}` : ''}`,
    `requests ${s.counters.requests}, served ${s.counters.served}, failovers ${s.counters.failovers}, no usable account ${s.counters.noUsableAccount}`,
  ];
  // These and the store's line are not wrapped: they may name a file (where a setting comes from), kept whole to be copied.
  lines.push(...tail);
  const store = storeText(s.store, now);
  if (store) lines.push(s.store?.state === 'connected' && !s.store.problem ? store : paint.yellow(store));
  return lines.join('\n') + '\n';
}

/** The accounts whose sign-in is at least `routing.grant-warn-days` old, one warning each (none: no lines). */
function grantWarnings(s: StatusReport, labelWidth: number, width: number): string[] {
  const old = s.accounts.filter((a) => grantWarning(a));
  if (old.length === 0) return [];
  return ['', 'sign-in:', ...old.flatMap((a) => wrapText(`  ${a.label.padEnd(labelWidth)}  ${grantWarning(a)}`, width, labelWidth + 4))];
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
  process.stdout.write(
    values.json
      ? JSON.stringify(report, null, 2) + '\n'
      : formatStatusTable(report, Date.now(), { paint: paintFor(process.stdout, values.color), width: terminalWidth(process.stdout) }),
  );
  return 0;
}
