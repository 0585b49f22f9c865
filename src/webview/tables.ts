/** The panel's plain tables: the policy with each value's source, the bound sessions, the rollout metrics. */
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
