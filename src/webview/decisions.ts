/**
 * The decision browser: the decision log on disk, read by the extension in pages through the filtered
 * `/decisions` query (the CLI's `decisions` reads the same way): by account (served or tried), outcome,
 * selection reason, session (a prefix of its key hash), request id (a prefix:
 * `x-claude-router-request-id` of an answer) and time span; "Show more" reads the next older page.
 * Each decision expands to every candidate's verdict in words; only an expanded one builds its table.
 */
import type { DecisionView, PanelData } from '../proxy/status/panelData';
import { button, h, section } from './dom';
import { clock } from './palette';

/** What the browser asks the log for (empty = any), as the viewer typed it. */
export interface DecisionFilter {
  account: string;
  outcome: string;
  /** The selection reason. */
  reason: string;
  /** Lower-case hex prefix of the session key hash (4–16 digits count; fewer are not sent). */
  session: string;
  /** Prefix of the router's request id. */
  request: string;
  /** Local date and time, `2026-01-31T14:05` (an `<input type="datetime-local">`'s value), or empty. */
  since: string;
  until: string;
}

export const NO_FILTER: Readonly<DecisionFilter> = Object.freeze({ account: '', outcome: '', reason: '', session: '', request: '', since: '', until: '' });

/** A session prefix the log can be searched by. */
const SESSION = /^[0-9a-f]{4,16}$/;

/**
 * The filter as `/decisions` parameters (the extension reads the log with them): times as epoch ms
 * (`until` to the end of its minute), a session prefix only from 4 hex digits on.
 */
export function filterParams(f: DecisionFilter): Record<string, string> {
  const out: Record<string, string> = {};
  if (f.account) out.account = f.account;
  if (f.outcome) out.outcome = f.outcome;
  if (f.reason) out.reason = f.reason;
  if (SESSION.test(f.session)) out.session = f.session;
  if (f.request) out.request = f.request;
  const ms = (v: string) => (v ? new Date(v).getTime() : NaN);
  if (Number.isFinite(ms(f.since))) out.since = String(ms(f.since));
  if (Number.isFinite(ms(f.until))) out.until = String(ms(f.until) + 59_999);
  return out;
}

const filtered = (f: DecisionFilter) => Object.values(f).some((v) => v !== '');

function select(name: keyof DecisionFilter, label: string, values: string[], current: string): HTMLElement {
  return h(
    'label',
    { class: 'filter' },
    `${label} `,
    h(
      'select',
      { 'data-filter': name, id: `filter-${name}` },
      h('option', { value: '', selected: current === '' }, 'any'),
      values.map((v) => h('option', { value: v, selected: current === v }, v)),
    ),
  );
}

function body(r: DecisionView): HTMLElement[] {
  return [
    h('p', { class: 'muted' }, `request ${r.requestId}${r.model ? ` · ${r.model}` : ''}${r.session ? ` · ${r.sessionKind} ${r.session}` : ''}`),
    h(
      'table',
      { class: 'candidates' },
      h('thead', {}, h('tr', {}, ...['#', 'account', 'verdict', 'why', '5h', '7d'].map((c) => h('th', { scope: 'col' }, c)))),
      h(
        'tbody',
        {},
        r.candidates.map((c) =>
          h(
            'tr',
            { class: c.verdict.replace(/ /g, '_') },
            h('td', {}, String(c.rank + 1)),
            h('td', {}, c.account),
            h('td', {}, c.verdict),
            h('td', {}, c.text),
            h('td', {}, c.session),
            h('td', {}, c.weekly),
          ),
        ),
      ),
    ),
    r.attempts ? h('p', { class: 'muted' }, `Attempts: ${r.attempts}`) : h('p', { class: 'muted' }, 'No upstream attempt.'),
  ].filter((e): e is HTMLElement => e !== null);
}

/** The "Decisions" section: the pages read from the log on disk for `f`; `open` holds the keys (`data-key`) of the expanded details. */
export function decisionsSection(d: PanelData, f: DecisionFilter, open: ReadonlySet<string>): HTMLElement {
  const accounts = [...new Set([...d.palette, ...(f.account ? [f.account] : [])])];
  const reasons = [...new Set([...d.reasons, ...(f.reason ? [f.reason] : [])])];
  const n = d.decisions.length;
  const count = d.decisionsError
    ? `The decision log cannot be read with these filters: ${d.decisionsError}`
    : n === 0
      ? d.decisionsLoading
        ? 'Reading the decision log…'
        : filtered(f)
          ? 'No decision in the log matches.'
          : 'No requests yet.'
      : `${n} matching ${n === 1 ? 'decision' : 'decisions'} from the log, newest first${d.decisionsMore ? '; older ones may match' : ''}.`;
  const input = (name: keyof DecisionFilter, label: string, attrs: Record<string, string | number>) =>
    h('label', { class: 'filter' }, `${label} `, h('input', { 'data-filter': name, id: `filter-${name}`, value: f[name], spellcheck: 'false', ...attrs }));
  return section(
    'decisions',
    'Decisions',
    h(
      'div',
      { class: 'filters', role: 'search', 'aria-label': 'filter decisions' },
      select('account', 'account', accounts, f.account),
      select('outcome', 'outcome', d.outcomes, f.outcome),
      select('reason', 'reason', reasons, f.reason),
      input('session', 'session', { type: 'search', placeholder: 'hash prefix (4+ hex)', size: 18 }),
      input('request', 'request', { type: 'search', placeholder: 'req_router_…', size: 22 }),
      input('since', 'from', { type: 'datetime-local' }),
      input('until', 'to', { type: 'datetime-local' }),
      filtered(f) ? button('Clear filters', 'clear-filters', {}, { class: 'action' }) : null,
      button('Open Decision Log', 'run', { command: 'openDecisionLog' }, { class: 'action' }),
    ),
    f.session && !SESSION.test(f.session) ? h('p', { class: 'muted' }, 'A session is looked up by 4 to 16 hex digits of its key hash.') : null,
    h('p', { class: d.decisionsError ? 'error' : 'muted', 'aria-live': 'polite', id: 'decisions-count' }, count),
    d.decisions.map((r) =>
      h(
        'details',
        { class: `decision ${r.outcome}`, id: `decision-${r.requestId}`, 'data-key': `decision:${r.requestId}`, open: open.has(`decision:${r.requestId}`) },
        h('summary', {}, h('span', { class: 'mono' }, clock(r.atMs)), ' ', h('strong', {}, r.servedBy ?? 'none'), ` · ${r.summary}`),
        open.has(`decision:${r.requestId}`) ? body(r) : null,
      ),
    ),
    d.decisionsMore ? button(d.decisionsLoading ? 'Reading…' : 'Show more', 'more', {}, { class: 'action', id: 'decisions-more' }) : null,
  );
}
