/**
 * The session timeline: one lane per recent session (its key hash, shortened), each request a mark
 * in the colour of the account that served it, each switch of account marked with its cause; the
 * selected session's requests listed below, with when and why it switched.
 */
import type { LaneView, PanelData } from '../proxy/status/panelData';
import { button, h, section, svg } from './dom';
import { accountClass, clock } from './palette';

const W = 600;
const H = 16;

function strip(lane: LaneView, d: PanelData, fromMs: number, toMs: number): SVGElement {
  const x = (t: number) => +(toMs === fromMs ? W / 2 : ((t - fromMs) / (toMs - fromMs)) * (W - 4) + 2).toFixed(2);
  return svg(
    'svg',
    { class: 'lane', viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': `session ${lane.short}: ${lane.summary}` },
    svg('line', { class: 'lane-axis', x1: 0, x2: W, y1: H / 2, y2: H / 2 }),
    lane.requests.map((q) =>
      svg(
        'rect',
        { class: `mark ${accountClass(d.palette, q.account)}`, x: x(q.atMs) - 1.5, y: 3, width: 3, height: H - 6, 'data-account': q.account ?? '' },
        svg('title', {}, `${clock(q.atMs)} ${q.account ?? 'not served'} (${q.outcome})`),
      ),
    ),
    lane.requests
      .filter((q) => q.switched)
      .map((q) =>
        svg(
          'line',
          { class: 'switch', x1: x(q.atMs), x2: x(q.atMs), y1: 0, y2: H, 'data-cause': q.cause ?? '' },
          svg('title', {}, `${clock(q.atMs)} switched to ${q.account}: ${q.why}`),
        ),
      ),
  );
}

function detail(lane: LaneView, d: PanelData): HTMLElement {
  return h(
    'div',
    { class: 'lane-detail', id: 'lane-detail', 'data-session': lane.hash },
    h('h3', {}, `Session ${lane.short} (${lane.kind}) — ${lane.summary}`),
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, ...['time', 'account', 'outcome', 'switch'].map((c) => h('th', { scope: 'col' }, c)))),
      h(
        'tbody',
        {},
        [...lane.requests]
          .reverse()
          .map((q) =>
            h(
              'tr',
              { class: q.switched ? 'switched' : '' },
              h('td', { class: 'mono' }, clock(q.atMs)),
              h('td', {}, h('span', { class: `swatch ${accountClass(d.palette, q.account)}`, 'aria-hidden': 'true' }), q.account ?? '—'),
              h('td', {}, q.outcome),
              h('td', {}, q.switched ? `switched: ${q.why}` : ''),
            ),
          ),
      ),
    ),
    button('Show its decisions', 'filter-session', { hash: lane.hash }, { class: 'action' }),
  );
}

/** The "Sessions over time" section; `selected` is the chosen session's hash (default: the latest). */
export function timelineSection(d: PanelData, selected: string | null): HTMLElement {
  if (d.lanes.length === 0) return section('timeline', 'Sessions over time', h('p', { class: 'muted' }, 'No session requests yet.'));
  const fromMs = Math.min(...d.lanes.map((l) => l.firstMs));
  const toMs = Math.max(...d.lanes.map((l) => l.lastMs));
  const chosen = d.lanes.find((l) => l.hash === selected) ?? d.lanes[0];
  return section(
    'timeline',
    'Sessions over time',
    h('p', { class: 'muted' }, `${clock(fromMs)} – ${clock(toMs)} · a mark per request in its account's colour, a line at each switch of account`),
    h(
      'div',
      { class: 'legend' },
      d.palette.map((label) => h('span', { class: 'legend-item' }, h('span', { class: `swatch ${accountClass(d.palette, label)}`, 'aria-hidden': 'true' }), label)),
    ),
    h(
      'ul',
      { class: 'lanes', 'aria-label': 'recent sessions' },
      d.lanes.map((lane) =>
        h(
          'li',
          { class: lane.hash === chosen.hash ? 'lane-row selected' : 'lane-row', id: `lane-${lane.hash}` },
          button(lane.short, 'session', { hash: lane.hash }, { class: 'lane-name mono', 'aria-pressed': lane.hash === chosen.hash ? 'true' : 'false', title: lane.summary }),
          strip(lane, d, fromMs, toMs),
        ),
      ),
    ),
    detail(chosen, d),
  );
}
