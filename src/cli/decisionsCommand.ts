/**
 * `claude-router decisions`: the decision inspector of the terminal — the last N decisions of the
 * running proxy (its `/decisions`, which reads the log on disk: src/proxy/state/decisionQuery.ts),
 * filtered, each with the account that served it and every candidate's verdict in words.
 */
import * as path from 'node:path';
import { AccountRegistry } from '../accounts/registry';
import type { StatusReport } from '../proxy/status/status';
import type { DecisionRecord } from '../routing/decision';
import { metricsFromRecord } from '../routing/decision';
import { candidateText, decisionReasonText } from '../proxy/status/statusView';
import { parseDecisionQuery, readDecisionPage } from '../proxy/state/decisionQuery';
import { formatDuration } from '../quota/duration';
import { configFromArgs, UsageError, waitForSignal } from './args';
import { findRunningProxy } from './discovery';
import { stateDirOf } from './runtime';
import { paintFor, type Paint } from './color';
import { fetchPage, getJson, targetOf, type ProxyTargetOptions } from './proxyClient';
import { resolveAccounts } from './accountSet';

export interface DecisionsOptions extends ProxyTargetOptions {
  limit: string;
  session?: string;
  account?: string;
  outcome?: string;
  reason?: string;
  since?: string;
  until?: string;
  request?: string;
  json?: boolean;
  /** Keep printing new decisions as they are made. */
  follow?: boolean;
}

/** The most decisions one command prints. */
const MAX_LIMIT = 10_000;
/** Records per request (the endpoint's most). */
const PAGE = 500;
/** How often `--follow` asks for new decisions, ms. */
const FOLLOW_MS = 1_000;
/** The most pages one `--follow` poll reads back to the last decision it printed. */
const FOLLOW_PAGES = 10;
const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * `--since`: ISO-8601, epoch ms, or a time ago (`30s`, `15m`, `2h`, `3d`).
 * @returns epoch ms
 * @throws UsageError for anything else
 */
export function sinceMs(value: string, now = Date.now(), option = '--since'): number {
  const ago = /^(\d+)\s*([smhd])$/.exec(value.trim());
  if (ago) return now - Number(ago[1]) * UNIT_MS[ago[2]];
  const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(ms)) throw new UsageError(`${option}: expected an ISO-8601 time, epoch milliseconds or a time ago (30m, 2h, 3d), got "${value}"`);
  return ms;
}

/**
 * @returns 0 (also when nothing matches)
 * @throws UsageError (exit 2) for a bad option, or an `--account` label no account has (when nothing matches); Error (exit 1) when the proxy cannot be asked
 */
export async function runDecisions(values: DecisionsOptions): Promise<number> {
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw new UsageError(`--limit: expected an integer 1–${MAX_LIMIT}, got "${values.limit}"`);
  const params = new URLSearchParams();
  for (const key of ['session', 'account', 'outcome', 'reason', 'request'] as const) if (values[key] !== undefined) params.set(key, values[key]);
  if (values.since !== undefined) params.set('since', String(sinceMs(values.since)));
  if (values.until !== undefined) params.set('until', String(sinceMs(values.until, Date.now(), '--until')));
  // The endpoint's own check, before asking: a bad filter is a usage error here.
  const checked = parseDecisionQuery(params.toString());
  if ('error' in checked) throw new UsageError(`--${checked.error}`);

  const { pages: source, labels } = await decisionSource(values);
  const query = params.toString();
  const records = await newest(source, query, limit, () => false);
  if (records.length === 0 && values.account !== undefined) await assertKnownAccount(values.account, labels);
  const paint = paintFor(process.stdout, values.color);
  // With --follow, JSON goes out as one record per line (JSON Lines), so each can be read as it comes.
  const print = (list: DecisionRecord[]) =>
    process.stdout.write(
      values.json
        ? values.follow
          ? list.map((r) => JSON.stringify(r) + '\n').join('')
          : JSON.stringify(list, null, 2) + '\n'
        : list.map((r) => formatDecision(r, paint) + '\n').join(''),
    );
  if (records.length === 0 && !values.follow) process.stdout.write(values.json ? '[]\n' : 'no decisions match\n');
  else print(records);
  if (!values.follow) return 0;

  // Only what comes after the newest decision printed: a poll reads pages back to it.
  let last = records.at(-1);
  let stop = false;
  void waitForSignal().then(() => (stop = true));
  while (!stop) {
    await new Promise((r) => setTimeout(r, FOLLOW_MS));
    if (stop) break;
    let fresh: DecisionRecord[];
    try {
      fresh = await newest(source, query, PAGE * FOLLOW_PAGES, (r) => r.requestId === last?.requestId);
    } catch (err) {
      process.stderr.write(`claude-router: ${(err as Error).message}
`);
      return 1;
    }
    const at = last ? fresh.findIndex((r) => r.requestId === last!.requestId) : -1;
    // Past the pages read back (a burst of new decisions), everything not older than the last printed.
    const unseen = at >= 0 ? fresh.slice(at + 1) : last ? fresh.filter((r) => r.ts >= last!.ts && r.requestId !== last!.requestId) : fresh;
    if (unseen.length) {
      print(unseen);
      last = unseen[unseen.length - 1];
    }
  }
  return 0;
}

/** One page of matching decisions for a query string (the `/decisions` parameters), and the query of the page before it. */
type PageSource = (query: string) => Promise<{ records: DecisionRecord[]; next: string | null }>;

/** Where the decisions are read, and the labels of the accounts there now. */
interface DecisionSource {
  pages: PageSource;
  /** The account labels, in order (those of the running proxy, or of the configuration and state directory). */
  labels: () => Promise<string[]>;
}

/**
 * Where the decisions are read: the running proxy's `/decisions` (it flushes its log first), or —
 * with no proxy registered in the state directory and no `--url` — the decision log on disk there,
 * read by the same reader (decisionQuery.ts), no key needed. The configuration is resolved once.
 * @throws UsageError when a proxy must be asked and no client key is found
 */
async function decisionSource(values: DecisionsOptions): Promise<DecisionSource> {
  const { config } = await configFromArgs(values.config, values.stateDir);
  const dir = stateDirOf(config);
  if (values.url === undefined && values.key === undefined && !findRunningProxy(dir)) {
    const pages: PageSource = async (query) => {
      const q = parseDecisionQuery(query);
      if ('error' in q) throw new UsageError(`--${q.error}`);
      const page = await readDecisionPage(dir, q);
      if (page.next === null) return { records: page.records, next: null };
      const next = new URLSearchParams(query);
      next.set('before', page.next);
      return { records: page.records, next: next.toString() };
    };
    const labels = async () => (await resolveAccounts(config, new AccountRegistry(path.join(dir, 'accounts.json')))).accounts.map((a) => a.label);
    return { pages, labels };
  }
  const target = targetOf(values, config);
  const pages: PageSource = async (query) => {
    const page = await fetchPage<DecisionRecord>(target, `/decisions?${query}`);
    return { records: page.records, next: page.next === null ? null : page.next.replace(/^\/decisions\?/, '') };
  };
  return { pages, labels: async () => (await getJson<StatusReport>(target, '/status')).accounts.map((a) => a.label) };
}

/**
 * `--account` that matched nothing: a label no account has is a usage error naming the labels there
 * are (a typo, not an idle account). A label that is there, or labels that cannot be read: nothing.
 * @throws UsageError (exit 2) when no account has the label
 */
async function assertKnownAccount(label: string, labels: () => Promise<string[]>): Promise<void> {
  let known: string[];
  try {
    known = await labels();
  } catch {
    return;
  }
  if (known.includes(label)) return;
  const there = known.length ? `the accounts: ${known.map((l) => JSON.stringify(l)).join(', ')}` : 'there is no account';
  throw new UsageError(`--account: no account has the label ${JSON.stringify(label)} (${there})`);
}

/**
 * The newest `limit` matching decisions, oldest first, read page by page (newest page first)
 * and stopping early at a page that holds a decision for which `known` is true.
 */
async function newest(source: PageSource, query: string, limit: number, known: (r: DecisionRecord) => boolean): Promise<DecisionRecord[]> {
  const pages: DecisionRecord[][] = [];
  let count = 0;
  const first = new URLSearchParams(query);
  first.set('limit', String(Math.min(PAGE, limit)));
  let next: string | null = first.toString();
  while (next !== null && count < limit) {
    const page = await source(next);
    pages.unshift(page.records.slice(Math.max(0, page.records.length - (limit - count))));
    count += page.records.length;
    next = page.records.some(known) ? null : page.next;
  }
  return pages.flat();
}

/**
 * One decision for people: when, which request, who served it and why, then every candidate's
 * verdict in words as of the decision's time.
 */
export function formatDecision(r: DecisionRecord, paint: Paint): string {
  const at = Date.parse(r.ts);
  const session = r.stickyKeyHash ? `session ${r.stickyKeyHash}` : 'no session';
  const outcome = r.outcome === 'success' ? paint.green(r.outcome) : paint.red(r.outcome);
  const served = r.servedBy ? `→ ${paint.bold(r.servedBy)}${r.servedByFallback ? ' (fallback)' : ''}` : '→ no account';
  const lines = [
    `${r.ts.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}  ${r.requestId}  ${r.model ?? r.path}${r.stream ? ' (stream)' : ''}  ${session}`,
    `  ${served}  ${outcome} ${r.status}  ${r.durationMs < 10_000 ? `${Math.round(r.durationMs)} ms` : formatDuration(r.durationMs / 1000)}  ${r.strategy}: ${decisionReasonText(r)}`,
  ];
  if (r.attempts.length > 1) lines.push(`  attempts: ${r.attempts.map((a) => `${a.account} ${a.status || '-'} ${a.result}`).join(', ')}`);
  const width = Math.max(0, ...r.candidates.map((c) => c.account.length));
  for (const c of r.candidates) {
    const text = candidateText(c, metricsFromRecord(c.metrics), at);
    const colour = c.verdict === 'selected' ? paint.green : c.verdict === 'unusable' ? paint.yellow : (t: string) => t;
    lines.push(`    ${c.account.padEnd(width)}  ${colour(text)}`);
  }
  return lines.join('\n') + '\n';
}
