/**
 * Usage over time: per account, its 5-hour and weekly utilisation as two SVG polylines over the last
 * hour or day, cooldowns shaded, resets marked, and the samples as a table for screen readers and
 * for anyone who wants the numbers. Drawn with DOM APIs (no chart library: what is drawn stays
 * checkable against the numbers, and nothing needs inline styles or eval under the panel's CSP).
 */
import type { PanelData } from '../proxy/status/panelData';
import type { UsagePoint, UsageSeries } from '../proxy/status/usageHistory';
import { button, h, section, svg } from './dom';
import { accountClass, clock } from './palette';

/** The chart's coordinate box: x 0–600 across the range, y 0 (100 % used) – 100 (0 %). */
const CHART_W = 600;
const CHART_H = 100;

/** The charts' common time axis (epoch ms): the range, narrowed to the samples there are (at least {@link MIN_SPAN_MS}). */
interface Axis {
  fromMs: number;
  toMs: number;
}

/** The shortest span drawn, so a few minutes of samples do not crowd the right edge of an hour. */
const MIN_SPAN_MS = 2 * 60_000;

function axisOf(history: readonly UsageSeries[]): Axis | null {
  if (history.length === 0) return null;
  const toMs = Math.max(...history.map((s) => s.toMs));
  const rangeFrom = Math.min(...history.map((s) => s.fromMs));
  const firstSample = Math.min(...history.flatMap((s) => s.points.slice(0, 1).map((p) => p.t)), toMs);
  return { fromMs: Math.max(rangeFrom, Math.min(firstSample, toMs - MIN_SPAN_MS)), toMs };
}

const x = (t: number, a: Axis) => +(((t - a.fromMs) / (a.toMs - a.fromMs)) * CHART_W).toFixed(2);
const y = (used: number) => +(CHART_H - Math.min(1, Math.max(0, used)) * CHART_H).toFixed(2);
const pct = (v: number | null) => (v === null ? '?' : `${Math.round(v * 100)}%`);

/** The window's samples as a polyline, and a dot at the latest (so a single sample shows too). */
function line(s: UsageSeries, a: Axis, pick: (p: UsagePoint) => number | null, window: string, cls: string): SVGElement[] {
  const known = s.points.filter((p) => pick(p) !== null);
  if (known.length === 0) return [];
  const last = known[known.length - 1];
  return [
    svg('polyline', { class: `line ${cls}`, points: known.map((p) => `${x(p.t, a)},${y(pick(p)!)}`).join(' '), 'data-window': window }),
    svg('circle', { class: `now ${cls}`, cx: x(last.t, a), cy: y(pick(last)!), r: 2.5, 'data-window': window }),
  ];
}

/** Shaded spans where the router held the account in a cooldown. */
function coolingSpans(s: UsageSeries, a: Axis): SVGElement[] {
  const spans: SVGElement[] = [];
  let start: number | null = null;
  s.points.forEach((p, i) => {
    if (p.cooling && start === null) start = p.t;
    const end = !p.cooling ? p.t : i === s.points.length - 1 ? s.toMs : null;
    if (start !== null && end !== null) {
      spans.push(svg('rect', { class: 'cooling', x: x(start, a), y: 0, width: Math.max(1, x(end, a) - x(start, a)), height: CHART_H }, svg('title', {}, 'cooling down')));
      start = null;
    }
  });
  return spans;
}

function chart(s: UsageSeries, a: Axis, d: PanelData, open: boolean): HTMLElement {
  const cls = accountClass(d.palette, s.label);
  const span = s.range === 'hour' ? 'the last hour' : 'the last 24 hours';
  const resets = s.points
    .filter((p) => p.reset)
    .map((p) => svg('line', { class: 'reset', x1: x(p.t, a), x2: x(p.t, a), y1: 0, y2: CHART_H }, svg('title', {}, '5-hour window reset')));
  return h(
    'figure',
    { class: 'chart-box', id: `chart-${s.label}`, 'data-account': s.label },
    h(
      'figcaption',
      {},
      h('strong', {}, s.label),
      h('span', { class: `key solid ${cls}` }, '5 h'),
      h('span', { class: `key dashed ${cls}` }, '7 d'),
      h('span', { class: 'muted' }, s.points.length ? `${s.points.length} ${s.points.length === 1 ? 'sample' : 'samples'} over ${span}` : `no samples over ${span} yet`),
    ),
    svg(
      'svg',
      {
        class: 'chart',
        viewBox: `0 0 ${CHART_W} ${CHART_H}`,
        preserveAspectRatio: 'none',
        role: 'img',
        'aria-label': `${s.label}: 5-hour and weekly utilisation over ${span}`,
      },
      [0.5, 0.8].map((g) => svg('line', { class: 'grid', x1: 0, x2: CHART_W, y1: y(g), y2: y(g) })),
      coolingSpans(s, a),
      resets,
      line(s, a, (p) => p.weekly, '7d', `dashed ${cls}`),
      line(s, a, (p) => p.session, '5h', `solid ${cls}`),
    ),
    h('div', { class: 'axis muted', 'aria-hidden': 'true' }, h('span', {}, clock(a.fromMs)), h('span', {}, `${clock(a.toMs)} (now)`)),
    h(
      'details',
      { class: 'chart-data', id: `chart-data-${s.label}`, 'data-key': `chart:${s.label}`, open },
      h('summary', {}, 'Samples'),
      open
        ? h(
            'table',
            { class: 'samples' },
            h(
              'thead',
              {},
              h('tr', {}, h('th', { scope: 'col' }, 'time'), h('th', { scope: 'col' }, '5 h'), h('th', { scope: 'col' }, '7 d'), h('th', { scope: 'col' }, 'cooling')),
            ),
            h(
              'tbody',
              {},
              s.points.map((p) =>
                h(
                  'tr',
                  { 'data-t': p.t, 'data-session': p.session ?? '', 'data-weekly': p.weekly ?? '' },
                  h('td', {}, clock(p.t)),
                  h('td', {}, pct(p.session)),
                  h('td', {}, pct(p.weekly)),
                  h('td', {}, p.cooling ? 'yes' : ''),
                ),
              ),
            ),
          )
        : null,
    ),
  );
}

/** The "Usage over time" section; `openData` holds the charts whose samples table is open. */
export function chartsSection(d: PanelData, openData: ReadonlySet<string>): HTMLElement {
  const axis = axisOf(d.history);
  const rangeButton = (range: 'hour' | 'day', label: string) =>
    button(label, 'range', { range }, { class: d.range === range ? 'toggle on' : 'toggle', 'aria-pressed': d.range === range ? 'true' : 'false' });
  return section(
    'charts',
    'Usage over time',
    h('div', { class: 'actions', role: 'group', 'aria-label': 'time span' }, rangeButton('hour', 'Last hour'), rangeButton('day', 'Last 24 hours')),
    axis === null ? h('p', { class: 'muted' }, 'No samples yet.') : d.history.map((s) => chart(s, axis, d, openData.has(`chart:${s.label}`))),
    h(
      'p',
      { class: 'muted' },
      'Sampled by this window while it runs (the last hour every 10 s, the last day every minute; a chart starts at the first sample); cooldowns shaded, 5-hour resets marked.',
    ),
  );
}
