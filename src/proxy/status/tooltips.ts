/**
 * The Markdown of the VS Code tooltips (the Accounts view's account nodes, the status bar
 * item), built from a `/status` report. Pure, so it is tested without VS Code.
 *
 * Every string that comes from a person or from another process — an account label, a
 * sign-in reason, a model family from the upstream's headers, anything a leading window's
 * `/status` says — goes through {@link escapeMarkdown}: it renders as the text it is, never as a
 * link, an image, HTML or a theme icon.
 */
import { formatDuration } from '../../quota/duration';
import type { AccountReport, StatusReport } from './status';
import {
  accountDescription,
  accountState,
  concurrencyText,
  eligibilityText,
  grantText,
  grantWarning,
  percent,
  storeText,
  timeUntil,
  warmUpText,
  whyNow,
  type AccountState,
} from './statusView';

/** Codicons per account state (the tree view's icons and the status bar tooltip's). */
export const STATE_ICONS: Record<AccountState, string> = {
  serving: 'pass-filled',
  usable: 'pass',
  cooling: 'watch',
  saturated: 'warning',
  needs_sign_in: 'key',
  disabled: 'circle-slash',
};

/** How each state is named in words. */
export const STATE_LABEL: Record<AccountState, string> = {
  serving: 'serving',
  usable: 'usable',
  cooling: 'cooling down',
  saturated: 'saturated',
  needs_sign_in: 'needs sign-in',
  disabled: 'disabled',
};

/**
 * `text` as Markdown that renders as exactly that text: every ASCII punctuation character is
 * backslash-escaped (CommonMark allows it for all of them), which takes apart link and image
 * syntax, emphasis, HTML tags and entities, bare-URL autolinks (`https\:`) and theme icons
 * (`\$(…)`); line breaks become spaces, so the text stays in its line.
 */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').replace(/[!-/:-@[-`{-~]/g, '\\$&');
}

/**
 * The tooltip of one account in the Accounts view.
 * @param now epoch ms
 */
export function accountTooltip(a: AccountReport, s: StatusReport, now: number): string {
  const state = accountState(a, s);
  const e = escapeMarkdown;
  const lines = [
    `**${e(a.label)}** — ${STATE_LABEL[state]}${a.primary ? ' · primary' : ''}${a.fallback ? ' · fallback' : ''}\n\n`,
    `- status: ${a.status} · eligibility for a new request: ${e(eligibilityText(a, now))}\n`,
    `- 5-hour window: ${percent(a.session.used)} used, resets in ${e(timeUntil(a.session.resetsAt, now))}\n`,
    `- weekly window: ${percent(a.weekly.used)} used, resets in ${e(timeUntil(a.weekly.resetsAt, now))}\n`,
  ];
  for (const [family, w] of Object.entries(a.scoped)) lines.push(`- weekly ${e(family)}: ${percent(w.used)} used, resets in ${e(timeUntil(w.resetsAt, now))}\n`);
  if (a.coolingUntil) lines.push(`- cooling down (${e((a.coolingReason ?? '').replace(/_/g, ' '))}) for ${e(timeUntil(a.coolingUntil, now))}\n`);
  if (a.needsSignIn) lines.push(`- needs sign-in: ${e(a.needsSignInReason ?? '')}\n`);
  const grant = grantWarning(a) || grantText(a);
  if (grant) lines.push(`- ${e(grant)}\n`);
  const age = a.evidence.observedAt ? `, ${formatDuration(Math.max(0, Math.round((now - Date.parse(a.evidence.observedAt)) / 1000)))} old` : '';
  lines.push(`- quota data: ${e(a.evidence.freshness.replace('_', ' ') + age)}\n`);
  const concurrency = concurrencyText(a);
  // Numbers only: nothing to escape.
  if (concurrency) lines.push(`- concurrency: ${concurrency}\n`);
  const warm = warmUpText(a, now);
  if (warm) lines.push(`- ${e(warm)}\n`);
  lines.push(`- in flight: ${a.inflight} · bound sessions: ${a.boundSessions}\n\n`);
  lines.push(`*${e(whyNow(a, s))}*`);
  return lines.join('');
}

/**
 * The status bar item's tooltip: the pool at a glance, one line per account (with its state's
 * theme icon), and who serves.
 * @param head the first line's text after "Claude Router" (plain text; escaped here)
 * @param role who serves, e.g. `serving at http://127.0.0.1:48290` (plain text; escaped here)
 * @param now epoch ms
 */
export function poolTooltip(s: StatusReport, head: string, role: string, now: number): string {
  const lines = [`**Claude Router**${escapeMarkdown(head)}\n\n`];
  for (const a of s.accounts) {
    lines.push(`- $(${STATE_ICONS[accountState(a, s)]}) **${escapeMarkdown(a.label)}** — ${escapeMarkdown(accountDescription(a, now))}\n`);
  }
  const store = storeText(s.store, now);
  if (store) lines.push(`\n${escapeMarkdown(store)}\n`);
  lines.push(`\n${escapeMarkdown(role)} · click for routing status`);
  return lines.join('');
}
