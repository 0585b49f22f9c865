/** The panel's plain tables: the policy with each value's source, the bound sessions, the rollout metrics, the cost leases. */
import type { PanelData } from '../proxy/status/panelData';
import { h, section, table } from './dom';

export function policySection(d: PanelData): HTMLElement {
  return section(
    'policy',
    'Policy',
    table(
      ['key', 'value', 'source'],
      d.policy.map((r) => [r.key, r.value, h('span', { class: 'muted' }, r.source)]),
    ),
    h('p', { class: 'muted' }, d.configLine),
  );
}

export function sessionsSection(d: PanelData): HTMLElement {
  return section(
    'sessions',
    `Bound sessions (${d.sessions.length})`,
    d.sessions.length === 0
      ? h('p', { class: 'muted' }, d.sessionAffinity ? 'None yet.' : 'Session affinity is off.')
      : table(
          ['session', 'account', 'idle expiry in'],
          d.sessions.map((x) => [h('span', { class: 'mono', title: x.hash }, x.short), x.account, x.idle]),
        ),
  );
}

export function metricsSection(d: PanelData): HTMLElement | null {
  if (!d.metrics) return null;
  return section('metrics', d.metrics.title, table([], d.metrics.rows));
}

/** Cost leases: each model's output estimate and each account's reservations in flight. */
export function estimationSection(d: PanelData): HTMLElement | null {
  const e = d.estimation;
  if (!e) return null;
  return section(
    'estimation',
    'Cost leases',
    h('p', { class: 'muted' }, e.note),
    e.models.length === 0 ? h('p', { class: 'muted' }, 'No complete answer yet: every request leases its max_tokens.') : table(['model', 'output estimate'], e.models),
    table(['account', 'reserved by the requests in flight (estimated tokens)'], e.accounts),
  );
}
