/**
 * What the status bar item says and how loudly, decided from the pool's numbers alone. Pure, so
 * every case is tested without VS Code; the controller only maps it onto the item.
 *
 * - No account configured: a neutral "set up" entry (a fresh install is not a warning).
 * - Several accounts: the warning colour only when fewer than two are usable (no failover left).
 * - One account: neutral while it is usable.
 * - The error colour when none of the pool's accounts is usable.
 * - The warning colour too while a shared pool's store is unreachable (`· store offline`).
 * The number says what it means: `2/3 usable · 64% left`, where "left" is the best headroom
 * among the usable accounts.
 */
import { percent } from './statusView';

/** The pool's numbers the decision needs (see `poolSummary`). */
export interface StatusBarInput {
  /** every configured account, fallbacks and disabled ones included */
  configured: number;
  /** usable accounts of the pool (not fallback, enabled) */
  usable: number;
  /** accounts of the pool */
  total: number;
  /** best headroom among the usable accounts (0..1), null when unknown */
  bestHeadroom: number | null;
  simulated: boolean;
  /** A shared pool's store is unreachable: this router serves from its own copy (docs/shared-pool.md). Absent: no store, or reachable. */
  storeUnreachable?: boolean;
}

export type StatusBarSeverity = 'normal' | 'warning' | 'error';

export interface StatusBarView {
  /** the item's text, with a theme icon */
  text: string;
  severity: StatusBarSeverity;
  /** what a screen reader says */
  ariaLabel: string;
  /** the tooltip's first line after "Claude Router" (plain text) */
  head: string;
  /** true when the item should lead to setting up an account rather than to the routing status */
  setUp: boolean;
}

export function statusBarView(input: StatusBarInput): StatusBarView {
  const { configured, usable, total, bestHeadroom, simulated } = input;
  const sim = simulated ? ' (simulated)' : '';
  if (configured === 0) {
    return {
      text: '$(plug) Claude Router: set up',
      severity: 'normal',
      ariaLabel: 'Claude Router: no accounts yet. Activate to add an account or try simulated accounts.',
      head: ' — no accounts yet: click to add one or to try simulated accounts',
      setUp: true,
    };
  }
  const left = usable > 0 && bestHeadroom !== null ? percent(bestHeadroom) : null;
  const offline = input.storeUnreachable === true;
  const severity: StatusBarSeverity = usable === 0 ? 'error' : (total >= 2 && usable < 2) || offline ? 'warning' : 'normal';
  const counts = `${usable} of ${total} ${total === 1 ? 'account' : 'accounts'} usable`;
  const store = offline ? ", shared store unreachable (serving from this machine's copy)" : '';
  return {
    text: `$(server-process) ${usable}/${total} usable${left ? ` · ${left} left` : ''}${offline ? ' · $(debug-disconnect) store offline' : ''}${sim}`,
    severity,
    ariaLabel: `Claude Router${sim}: ${counts}${left ? `, best headroom ${left} left` : ''}${store}. Activate for the routing status.`,
    head: `${sim} — ${counts}${left ? `, best headroom ${left} left` : ''}${store}`,
    setUp: false,
  };
}
