/**
 * The decision browser: the last decisions, filtered by the account that served them, their outcome,
 * the session (a prefix of its key hash) and the request id (a prefix: `x-claude-router-request-id`
 * of an answer), each expandable to every candidate's verdict in words.
 * Shown in pages; only an expanded decision builds its candidate table.
 */
import type { DecisionView, PanelData } from '../proxy/status/panelData';
import { button, h, section } from './dom';
import { clock } from './palette';

/** What the browser shows: the filters (empty = any) and how many matches. */
export interface DecisionFilter {
  account: string;
  outcome: string;
  /** Lower-case hex prefix of the session key hash. */
  session: string;
  /** Prefix of the router's request id. */
  request: string;
}

export const PAGE = 50;

function matches(r: DecisionView, f: DecisionFilter): boolean {
  if (f.account && (r.servedBy ?? '—') !== f.account) return false;
  if (f.outcome && r.outcome !== f.outcome) return false;
  if (f.session && !(r.session ?? '').startsWith(f.session)) return false;
  if (f.request && !r.requestId.startsWith(f.request)) return false;
  return true;
}

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

/**
 * The "Decisions" section.
 * @param open keys (`data-key`) of the expanded details
 * @param shown how many matching decisions to list
 */
export function decisionsSection(d: PanelData, f: DecisionFilter, open: ReadonlySet<string>, shown: number): HTMLElement {
  const accounts = [...new Set([...d.palette, ...d.decisions.map((r) => r.servedBy ?? '—')])];
  const outcomes = [...new Set(d.decisions.map((r) => r.outcome))].sort();
  const hits = d.decisions.filter((r) => matches(r, f));
  const page = hits.slice(0, shown);
  return section(
    'decisions',
    'Decisions',
    h(
      'div',
      { class: 'filters', role: 'search', 'aria-label': 'filter decisions' },
      select('account', 'served by', accounts, f.account),
      select('outcome', 'outcome', outcomes, f.outcome),
      h(
        'label',
        { class: 'filter' },
        'session ',
        h('input', { type: 'search', 'data-filter': 'session', id: 'filter-session', value: f.session, placeholder: 'hash prefix', spellcheck: 'false', size: 18 }),
      ),
      h(
        'label',
        { class: 'filter' },
        'request ',
        h('input', { type: 'search', 'data-filter': 'request', id: 'filter-request', value: f.request, placeholder: 'req_router_…', spellcheck: 'false', size: 22 }),
      ),
      f.account || f.outcome || f.session || f.request ? button('Clear filters', 'clear-filters', {}, { class: 'action' }) : null,
      button('Open Decision Log', 'run', { command: 'openDecisionLog' }, { class: 'action' }),
    ),
    h(
      'p',
      { class: 'muted', 'aria-live': 'polite', id: 'decisions-count' },
      d.decisions.length === 0 ? 'No requests yet.' : `${hits.length} of the last ${d.decisions.length} decisions match; newest first.`,
    ),
    page.map((r) =>
      h(
        'details',
        { class: `decision ${r.outcome}`, id: `decision-${r.requestId}`, 'data-key': `decision:${r.requestId}`, open: open.has(`decision:${r.requestId}`) },
        h('summary', {}, h('span', { class: 'mono' }, clock(r.atMs)), ' ', h('strong', {}, r.servedBy ?? 'none'), ` · ${r.summary}`),
        open.has(`decision:${r.requestId}`) ? body(r) : null,
      ),
    ),
    hits.length > page.length ? button(`Show ${Math.min(PAGE, hits.length - page.length)} more`, 'more', {}, { class: 'action' }) : null,
  );
}
