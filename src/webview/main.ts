/**
 * The "Show Routing Status" page. It draws the data the extension posts (PanelData) and patches
 * the page in place on every update (morphdom): an expanded decision stays expanded, focus and
 * the filters stay where they are. What the viewer chose (time span, expanded rows, filters, the
 * selected session) is kept with `setState`, so it survives the panel being hidden and a window
 * reload (the extension's WebviewPanelSerializer restores the panel with it).
 */
import morphdom from 'morphdom';
import type { PanelData } from '../proxy/status/panelData';
import type { HistoryRange } from '../proxy/state/usageHistory';
import { accountsSection } from './accounts';
import { chartsSection } from './charts';
import { decisionsSection, filterParams, NO_FILTER, type DecisionFilter } from './decisions';
import { h } from './dom';
import { estimationSection, metricsSection, policySection, sessionsSection } from './tables';
import { timelineSection } from './timeline';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

/** What the viewer chose; saved with the webview's state. */
interface ViewState {
  range: HistoryRange;
  /** `data-key`s of the expanded details (decisions, sample tables). */
  open: string[];
  filter: DecisionFilter;
  /** The selected session's key hash. */
  selected: string | null;
}

/** The chart ranges (usageHistory.ts's HISTORY_RANGES: the page imports no code of the extension). */
const isRange = (v: unknown): v is HistoryRange => v === 'hour' || v === 'day' || v === 'week';

const vscode = acquireVsCodeApi();
const root = document.getElementById('root')!;
const view = restore(vscode.getState());
let data: PanelData | null = null;

/** A saved state, or the defaults for whatever is missing or malformed. */
function restore(saved: unknown): ViewState {
  const s = (saved && typeof saved === 'object' ? saved : {}) as Partial<ViewState>;
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  return {
    range: isRange(s.range) ? s.range : 'hour',
    open: Array.isArray(s.open) ? s.open.filter((k): k is string => typeof k === 'string').slice(-200) : [],
    filter: Object.fromEntries(Object.keys(NO_FILTER).map((k) => [k, str((s.filter as Record<string, unknown> | undefined)?.[k])])) as unknown as DecisionFilter,
    selected: typeof s.selected === 'string' ? s.selected : null,
  };
}

function page(d: PanelData | null): Node[] {
  const title = h('h1', {}, 'Claude Router', d?.simulated ? h('span', { class: 'badge sim' }, 'simulated accounts') : null);
  if (!d) return [title, h('p', { class: 'muted' }, 'Loading…')];
  const open = new Set(view.open);
  const head = [
    title,
    d.error ? h('p', { class: 'error', role: 'alert' }, d.error) : null,
    d.settingsError ? h('p', { class: 'error' }, `Settings rejected (the last good policy stays in force): ${d.settingsError}`) : null,
    d.header ? h('p', { class: 'muted', id: 'pool-line' }, d.header) : null,
  ];
  if (d.policy.length === 0 && !d.emptyPool) return head.filter((e): e is HTMLElement => e !== null);
  const sections = d.emptyPool
    ? [accountsSection(d)]
    : [
        accountsSection(d),
        chartsSection(d, open),
        timelineSection(d, view.selected),
        decisionsSection(d, view.filter, open),
        sessionsSection(d),
        policySection(d),
        metricsSection(d),
        estimationSection(d),
      ];
  return [...head, ...sections].filter((e): e is HTMLElement => e !== null);
}

/** Patches the page to show `data` with the viewer's choices, and saves those choices. */
function render(): void {
  const next = document.createElement('main');
  next.id = 'root';
  next.append(...page(data));
  morphdom(root, next, {
    // Unchanged subtrees are left alone (and the comparison is cheaper than the walk).
    onBeforeElUpdated: (from, to) => !from.isEqualNode(to),
  });
  vscode.setState(view);
}

function update(change: (v: ViewState) => void): void {
  change(view);
  render();
}

root.addEventListener('click', (e) => {
  const target = (e.target as Element).closest<HTMLElement>('[data-action]');
  if (!target) return;
  const { action, command, range, hash } = target.dataset;
  if (action === 'run' && command) vscode.postMessage({ type: 'run', command });
  else if (action === 'range' && isRange(range)) {
    update((v) => (v.range = range));
    vscode.postMessage({ type: 'range', range });
  } else if (action === 'session' && hash) update((v) => (v.selected = hash));
  else if (action === 'filter-session' && hash) {
    setFilter({ ...NO_FILTER, session: hash.slice(0, 8) });
    document.getElementById('decisions')?.scrollIntoView();
  } else if (action === 'clear-filters') setFilter({ ...NO_FILTER });
  else if (action === 'more') vscode.postMessage({ type: 'more-decisions' });
});

/** Asks the extension to read the log for the viewer's filter (it posts the page with the next update). */
function askDecisions(): void {
  vscode.postMessage({ type: 'decisions', filter: filterParams(view.filter) });
}

/** Shows `filter`'s decisions: patched now, the log read again when the parameters it sends changed. */
function setFilter(filter: DecisionFilter): void {
  const before = JSON.stringify(filterParams(view.filter));
  update((v) => (v.filter = filter));
  if (JSON.stringify(filterParams(filter)) !== before) askDecisions();
}

// `toggle` does not bubble: listen in the capture phase.
root.addEventListener(
  'toggle',
  (e) => {
    const el = e.target as HTMLDetailsElement;
    const key = el.dataset.key;
    if (!key || view.open.includes(key) === el.open) return;
    update((v) => (v.open = el.open ? [...v.open, key] : v.open.filter((k) => k !== key)));
  },
  true,
);

function onFilter(e: Event): void {
  const el = e.target as HTMLInputElement | HTMLSelectElement;
  const name = el.dataset.filter as keyof DecisionFilter | undefined;
  if (!name) return;
  const value = name === 'session' ? el.value.trim().toLowerCase() : name === 'request' ? el.value.trim() : el.value;
  if (view.filter[name] === value) return;
  setFilter({ ...view.filter, [name]: value });
}
root.addEventListener('input', onFilter);
root.addEventListener('change', onFilter);

window.addEventListener('message', (e: MessageEvent<{ type?: string; data?: PanelData }>) => {
  if (e.data?.type !== 'update' || !e.data.data) return;
  data = e.data.data;
  render();
});

render();
vscode.postMessage({ type: 'ready', range: view.range });
askDecisions();
