/**
 * `claude-router explain [--model M] [--session H]`: "would it be picked" — how the running proxy
 * would route a new request now (its `/preview`), with each account's verdict in words.
 */
import type { PreviewReport, StatusReport } from '../proxy/status/status';
import { candidateText, explainReason, reportFigures } from '../proxy/status/statusView';
import { isStickyKeyHash } from '../routing/identify';
import { UsageError } from './args';
import { paintFor } from './color';
import { getJson, proxyTarget, type ProxyTargetOptions } from './proxyClient';

export interface ExplainOptions extends ProxyTargetOptions {
  model?: string;
  /** A session's key hash (16 hex digits): the preview then follows its binding. */
  session?: string;
  json?: boolean;
}

/**
 * @returns 0
 * @throws UsageError (exit 2) for a malformed session hash; Error (exit 1) when the proxy cannot be asked
 */
export async function runExplain(values: ExplainOptions): Promise<number> {
  if (values.session !== undefined && !isStickyKeyHash(values.session))
    throw new UsageError('--session: expected a session key hash of 16 lowercase hex digits (as `decisions` shows it)');
  const target = await proxyTarget(values);
  const q = new URLSearchParams();
  if (values.model !== undefined) q.set('model', values.model);
  if (values.session !== undefined) q.set('session', values.session);
  const [status, preview] = await Promise.all([getJson<StatusReport>(target, '/status'), getJson<PreviewReport>(target, `/preview?${q.toString()}`)]);
  if (values.json) {
    process.stdout.write(JSON.stringify(preview, null, 2) + '\n');
    return 0;
  }
  const paint = paintFor(process.stdout, values.color);
  const now = Date.now();
  const request = `A new request${values.model ? ` for ${values.model}` : ''}${values.session ? ` of session ${values.session}` : ''}`;
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
