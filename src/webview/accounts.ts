/** The panel's Accounts section: one card per account with its usage bars, or the empty pool's next steps. */
import type { AccountView, BarView, PanelData } from '../proxy/status/panelData';
import { button, h, section, svg } from './dom';

/** A bar's colour level: red from 97 %, yellow from 80 % (the soft limit's neighbourhood). */
function level(used: number): string {
  return used >= 0.97 ? 'full' : used >= 0.8 ? 'high' : 'ok';
}

/** A usage bar: an SVG whose fill rectangle is `used` of its width (an attribute, so the CSP allows it). */
function bar(b: BarView, account: string): HTMLElement {
  const width = b.used === null ? 0 : Math.min(100, Math.round(b.used * 100));
  return h(
    'div',
    { class: 'bar-row' },
    h('span', { class: 'bar-label' }, b.label),
    svg(
      'svg',
      {
        class: 'bar',
        role: 'meter',
        'aria-valuenow': width,
        'aria-valuemin': 0,
        'aria-valuemax': 100,
        'aria-label': `${account} ${b.label} used`,
        'data-window': b.label,
      },
      svg('rect', { class: `fill ${level(b.used ?? 0)}`, x: 0, y: 0, height: '100%', width: `${width}%` }),
    ),
    h('span', { class: 'bar-text' }, b.text),
  );
}

function card(a: AccountView): HTMLElement {
  return h(
    'div',
    { class: `account ${a.state}`, id: `account-${a.label}`, 'data-account': a.label },
    h(
      'div',
      { class: 'account-head' },
      h('strong', {}, a.label),
      a.badges.map((b, i) => h('span', { class: i === 0 ? `badge ${a.state}` : 'badge' }, b)),
      h('span', { class: 'muted' }, ` ${a.load}`),
    ),
    h('p', { class: 'status-line' }, a.statusLine),
    a.bars.map((b) => bar(b, a.label)),
    a.warnings.map((w) => h('p', { class: 'warn' }, w)),
    h('p', { class: 'why' }, a.why),
  );
}

/** The empty pool's next steps; each button runs one of the extension's commands. */
function emptyPool(): HTMLElement {
  const run = (label: string, command: string, primary = false) => button(label, 'run', { command }, { class: primary ? 'action primary' : 'action' });
  return h(
    'div',
    { class: 'empty-pool' },
    h('p', {}, 'No accounts yet. The router sends each Claude Code request to one of your accounts.'),
    h(
      'div',
      { class: 'actions' },
      run('Sign In with Claude', 'signIn', true),
      run("Import Claude Code's Login", 'importClaudeCodeLogin'),
      run('Add Account from Token', 'addToken'),
    ),
    h('p', { class: 'muted' }, 'No account at hand? Watch it route between simulated accounts:'),
    h('div', { class: 'actions' }, run('Try with Simulated Accounts', 'trySimulated')),
  );
}

export function accountsSection(d: PanelData): HTMLElement {
  const preview = d.previewModel ? h('p', { class: 'muted' }, `"Next request" is worked out for ${d.previewModel}, the model your last requests used.`) : null;
  return section('accounts', 'Accounts', d.emptyPool ? emptyPool() : [preview, d.accounts.map(card)]);
}
