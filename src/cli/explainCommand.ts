/**
 * `claude-router explain [--model M] [--session H]`: "would it be picked" — how the running proxy
 * would route a new request now (its `/preview`), with each account's verdict in words.
 */
import type { PreviewReport, SessionReport, StatusReport } from '../proxy/status/status';
import { candidateText, explainReason, reportFigures } from '../proxy/status/statusView';
import { isStickyKeyHash } from '../routing/identify';
import { UsageError } from './args';
import { paintFor } from './color';
import { getJson, proxyTarget, type ProxyTargetOptions } from './proxyClient';

export interface ExplainOptions extends ProxyTargetOptions {
  model?: string;
  /** A session's key hash (16 hex digits), or the first 4+ digits of a bound session's: the preview then follows its binding. */
  session?: string;
  json?: boolean;
}

/**
 * @returns 0
 * @throws UsageError (exit 2) for a malformed session hash, or a prefix that matches no bound session
 * or several; Error (exit 1) when the proxy cannot be asked
 */
export async function runExplain(values: ExplainOptions): Promise<number> {
  if (values.session !== undefined && !SESSION_PREFIX.test(values.session))
    throw new UsageError('--session: expected a session key hash (16 lowercase hex digits, as `decisions` shows it) or its first 4+ digits');
  const target = await proxyTarget(values);
  const status = await getJson<StatusReport>(target, '/status');
  const session = values.session === undefined ? undefined : boundSession(values.session, status.sessions);
  const q = new URLSearchParams();
  if (values.model !== undefined) q.set('model', values.model);
  if (session !== undefined) q.set('session', session);
  const preview = await getJson<PreviewReport>(target, `/preview?${q.toString()}`);
  if (values.json) {
    process.stdout.write(JSON.stringify(preview, null, 2) + '\n');
    return 0;
  }
  const paint = paintFor(process.stdout, values.color);
  const now = Date.now();
  const request = `A new request${values.model ? ` for ${values.model}` : ''}${session ? ` of session ${session}` : ''}`;
  const winner = preview.verdicts.find((v) => v.verdict === 'selected');
  const lines = [winner ? `${request} would go to ${paint.bold(winner.account)}: ${explainReason(preview.selectionReason)}.` : `${request} would find no usable account.`];
  const width = Math.max(0, ...status.accounts.map((a) => a.label.length));
  for (const a of status.accounts) {
    const v = preview.verdicts.find((x) => x.account === a.label);
    const text = !a.enabled ? 'disabled' : v ? candidateText(v, reportFigures(a), now) : 'not considered by this strategy';
    const colour = v?.verdict === 'selected' ? paint.green : v?.verdict === 'unusable' || !a.enabled ? paint.yellow : (t: string) => t;
    lines.push(`  ${a.label.padEnd(width)}  ${colour(text)}`);
  }
  process.stdout.write(lines.join('\n') + '\n');
  return 0;
}

/** A session key hash, or its first 4 or more digits (as `decisions --session` takes it). */
const SESSION_PREFIX = /^[0-9a-f]{4,16}$/;

/**
 * `--session`: a whole hash as it is (bound or not); a prefix → the one bound session it starts.
 * @throws UsageError when a prefix starts no bound session, or several (how many, and some of them)
 */
function boundSession(value: string, sessions: readonly SessionReport[]): string {
  if (isStickyKeyHash(value)) return value;
  const matches = sessions.filter((s) => s.sessionId.startsWith(value)).map((s) => s.sessionId);
  if (matches.length === 1) return matches[0];
  if (matches.length === 0) throw new UsageError(`--session ${value}: no bound session starts with it (${sessions.length} bound); give more digits, or the whole hash`);
  const shown = matches.slice(0, 5).join(', ');
  throw new UsageError(`--session ${value}: ambiguous, ${matches.length} bound sessions start with it (${shown}${matches.length > 5 ? ', …' : ''}); give more digits`);
}
