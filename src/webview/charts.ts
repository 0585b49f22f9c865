/**
 * Usage over time: per account, its 5-hour and weekly utilisation as two SVG polylines over the last
 * hour, day or week, cooldowns shaded, resets marked; beside it the requests it served and their
 * tokens, as bars per interval on a scale shared by all accounts; and the points as a table for
 * screen readers and for anyone who wants the numbers. The router keeps the history
 * (src/proxy/state/usageHistory.ts). Drawn with DOM APIs (no chart library: what is drawn stays
 * checkable against the numbers, and nothing needs inline styles or eval under the panel's CSP).
 */
import type { PanelData } from '../proxy/status/panelData';
import type { HistoryRange, UsagePoint, UsageSeries } from '../proxy/state/usageHistory';
import { button, h, section, svg } from './dom';
import { accountClass, clock } from './palette';

/** The chart's coordinate box: x 0–600 across the range, y 0 (100 % used) – 100 (0 %). */
const CHART_W = 600;
const CHART_H = 100;
/** The activity charts' height: y 0 (the scale's maximum) – 40 (none). */
const BAR_H = 40;

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

/** Tokens of a point, every kind. */
export const totalTokens = (p: UsagePoint) => p.inputTokens + p.outputTokens + p.cacheReadTokens + p.cacheCreationTokens;

/** The activity charts' shared scales: the most requests and tokens of any account's interval. */
interface Scales {
  requests: number;
  tokens: number;
}

/** `12,345` in the viewer's locale. */
const count = (n: number) => n.toLocaleString();

/** Bars of `value` per point, scaled to `max` (an interval with none draws nothing). */
function bars(s: UsageSeries, a: Axis, value: (p: UsagePoint) => number, max: number, kind: string, cls: string): SVGElement[] {
  return s.points
    .filter((p) => value(p) > 0)
    .map((p) => {
      const x0 = Math.max(0, x(p.t, a));
      const h = +((value(p) / Math.max(1, max)) * BAR_H).toFixed(2);
      return svg(
        'rect',
        { class: `bar-${kind} ${cls}`, x: x0, y: +(BAR_H - h).toFixed(2), width: Math.max(1, x(p.t + s.stepMs, a) - x0), height: h, [`data-${kind}`]: value(p), 'data-t': p.t },
        svg('title', {}, `${clock(p.t)}: ${count(value(p))} ${kind}`),
      );
    });
}

const SPAN: Record<HistoryRange, string> = { hour: 'the last hour', day: 'the last 24 hours', week: 'the last 7 days' };

function activity(s: UsageSeries, a: Axis, scales: Scales, kind: 'requests' | 'tokens', cls: string): HTMLElement {
  const value = kind === 'requests' ? (p: UsagePoint) => p.requests : totalTokens;
  const max = kind === 'requests' ? scales.requests : scales.tokens;
  const total = s.points.reduce((n, p) => n + value(p), 0);
  return h(
    'div',
    { class: 'activity' },
    h('span', { class: 'muted activity-label' }, `${kind === 'requests' ? 'Requests' : 'Tokens'}: ${count(total)}`),
    svg(
      'svg',
      {
        class: `chart activity-chart ${kind}`,
        viewBox: `0 0 ${CHART_W} ${BAR_H}`,
        preserveAspectRatio: 'none',
        role: 'img',
        'data-kind': kind,
        'data-max': max,
        'aria-label': `${s.label}: ${kind} served over ${SPAN[s.range]}, ${count(total)} in all; the tallest bar is ${count(max)}`,
      },
      bars(s, a, value, max, kind, cls),
    ),
  );
}

function chart(s: UsageSeries, a: Axis, d: PanelData, scales: Scales, open: boolean): HTMLElement {
  const cls = accountClass(d.palette, s.label);
  const span = SPAN[s.range];
  const sampled = s.points.filter((p) => p.session !== null || p.weekly !== null).length;
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
      h('span', { class: 'muted' }, sampled ? `${sampled} ${sampled === 1 ? 'sample' : 'samples'} over ${span}` : `no samples over ${span} yet`),
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
    activity(s, a, scales, 'requests', cls),
    activity(s, a, scales, 'tokens', cls),
    h('div', { class: 'axis muted', 'aria-hidden': 'true' }, h('span', {}, when(a.fromMs, s.range)), h('span', {}, `${when(a.toMs, s.range)} (now)`)),
    h(
      'details',
      { class: 'chart-data', id: `chart-data-${s.label}`, 'data-key': `chart:${s.label}`, open },
      h('summary', {}, 'Samples'),
      open
        ? h(
            'table',
            { class: 'samples' },
            h('thead', {}, h('tr', {}, ...['time', '5 h', '7 d', 'cooling', 'requests', 'input', 'output', 'cache read', 'cache write'].map((c) => h('th', { scope: 'col' }, c)))),
            h(
              'tbody',
              {},
              s.points.map((p) =>
                h(
                  'tr',
                  { 'data-t': p.t, 'data-session': p.session ?? '', 'data-weekly': p.weekly ?? '', 'data-requests': p.requests, 'data-tokens': totalTokens(p) },
                  h('td', {}, when(p.t, s.range)),
                  h('td', {}, pct(p.session)),
                  h('td', {}, pct(p.weekly)),
                  h('td', {}, p.cooling ? 'yes' : ''),
                  h('td', {}, count(p.requests)),
                  h('td', {}, count(p.inputTokens)),
                  h('td', {}, count(p.outputTokens)),
                  h('td', {}, count(p.cacheReadTokens)),
                  h('td', {}, count(p.cacheCreationTokens)),
                ),
              ),
            ),
          )
        : null,
    ),
  );
}

/** A time on the axis and in the table: the clock, with the day for the week's range. */
function when(ms: number, range: HistoryRange): string {
  return range === 'week' ? `${new Date(ms).toLocaleDateString(undefined, { weekday: 'short' })} ${clock(ms)}` : clock(ms);
}

/** The "Usage over time" section; `openData` holds the charts whose samples table is open. */
export function chartsSection(d: PanelData, openData: ReadonlySet<string>): HTMLElement {
  const axis = axisOf(d.history);
  const points = d.history.flatMap((s) => s.points);
  const scales: Scales = { requests: Math.max(0, ...points.map((p) => p.requests)), tokens: Math.max(0, ...points.map(totalTokens)) };
  const rangeButton = (range: HistoryRange, label: string) =>
    button(label, 'range', { range }, { class: d.range === range ? 'toggle on' : 'toggle', 'aria-pressed': d.range === range ? 'true' : 'false' });
  return section(
    'charts',
    'Usage over time',
    h(
      'div',
      { class: 'actions', role: 'group', 'aria-label': 'time span' },
      rangeButton('hour', 'Last hour'),
      rangeButton('day', 'Last 24 hours'),
      rangeButton('week', 'Last 7 days'),
    ),
    axis === null ? h('p', { class: 'muted' }, 'No samples yet.') : d.history.map((s) => chart(s, axis, d, scales, openData.has(`chart:${s.label}`))),
    h(
      'p',
      { class: 'muted' },
      'Kept by the router for 7 days and saved with its state, so a restart keeps it: the last hour in 10-second steps, the last 24 hours in 5-minute steps, the last 7 days in 30-minute steps (a chart starts at its first sample). Cooldowns shaded, 5-hour resets marked; requests and tokens (input, output, cache read and write) are those the account served, on one scale for all accounts.',
    ),
  );
}
