/**
 * Turning a `/status` report into what people read: account states, short
 * descriptions, countdowns and the reason the router would or would not pick
 * an account now. Pure; shared by the VS Code views and the CLI.
 */
import type { AccountReport, StatusReport, StoreReport } from './status';
import { formatDuration } from '../../quota/duration';
import { grantAgeText, grantWarningText } from '../../accounts/grant';
import type { DecisionRecord } from '../../routing/decision';
import type { CandidateVerdict } from '../../routing/plan';
import { forecastText, lossText, verdictText, type FilterVerdict, type LossFigures } from '../../routing/planner/verdict';

/** The state an account is shown in (tree icon, panel badge). */
export type AccountState = 'serving' | 'usable' | 'cooling' | 'saturated' | 'needs_sign_in' | 'disabled';

export function accountState(a: AccountReport, s: StatusReport): AccountState {
  if (a.needsSignIn) return 'needs_sign_in';
  if (!a.enabled) return 'disabled';
  if (a.coolingUntil) return 'cooling';
  if (!a.usable || a.sessionSaturated) return 'saturated';
  if (a.inflight > 0 || a.boundSessions > 0) return 'serving';
  // The account new requests go to carries the traffic only while no binding holds traffic elsewhere.
  return s.boundSessions === 0 && previewWinner(s) === a.label ? 'serving' : 'usable';
}

/** The account a new, unbound request would go to now (the preview's first choice), if any. */
function previewWinner(s: StatusReport): string | undefined {
  return s.preview.verdicts.find((v) => v.verdict === 'selected')?.account;
}

/** `2 bound sessions`, `1 bound session`. */
function boundSessionsText(n: number): string {
  return `${n} bound session${n === 1 ? '' : 's'}`;
}

/** An account's eligibility for a typical new request, in the filter verdict's words ("cooling — throttled, 27 s remaining"). */
export function eligibilityText(a: AccountReport, now: number): string {
  return a.eligibility ? verdictText(a.eligibility, now) : 'not considered by this strategy';
}

/** Displayed status and eligibility side by side: `Active · eligible`, `Paused · cooling — throttled, 27 s remaining`. */
export function statusAndEligibility(a: AccountReport, now: number): string {
  return `${a.status} · ${eligibilityText(a, now)}`;
}

/** `35%` or `?`. */
export function percent(f: number | null | undefined): string {
  return f === null || f === undefined ? '?' : `${Math.round(f * 100)}%`;
}

/** Time from `now` (epoch ms) until an ISO instant, e.g. `2 h 5 min` (`0 s` once past); `-` when unknown. */
export function timeUntil(iso: string | null | undefined, now: number): string {
  if (!iso) return '-';
  return formatDuration((Date.parse(iso) - now) / 1000);
}

/** The one-line description next to an account: `5h 35% · 7d 62% · resets 2 h`. */
export function accountDescription(a: AccountReport, now: number): string {
  const parts = [`5h ${percent(a.session.used)}`, `7d ${percent(a.weekly.used)}`];
  if (a.coolingUntil) parts.push(`cooling ${timeUntil(a.coolingUntil, now)}${a.coolingReason === 'window_exhausted' ? ` (${windowCooldownWhy(a, now)})` : ''}`);
  else if (a.session.resetsAt) parts.push(`5h resets in ${timeUntil(a.session.resetsAt, now)}`);
  if (a.evidence.freshness === 'unknown') parts.push('no quota data yet');
  return parts.join(' · ');
}

/** Why a window cooldown runs, and its re-check, for the windows shown beside it: `7d window exhausted; reads recovered — re-checked by the next request`. */
function windowCooldownWhy(a: AccountReport, now: number): string {
  const windows = a.coolingWindows?.length ? `${a.coolingWindows.join(' + ')} window exhausted` : 'usage window exhausted';
  const r = a.recheck;
  if (!r) return windows;
  if (r.state === 'due') return `${windows}; reads recovered — re-checked by the next new request`;
  if (r.state === 'probing') return `${windows}; reads recovered — re-checking now`;
  return `${windows}; a re-check failed, next in ${timeUntil(r.nextAt, now)}`;
}

/**
 * The account's limit warm-up in words — `warm-up ok (claude-haiku-4-5, after the 5h reset, 3 min ago)`,
 * `warm-up failed: 429 (…)`, `warm-up on, none yet` — or '' when it has not opted in and never warmed up.
 * @param now epoch ms
 */
export function warmUpText(a: AccountReport, now: number): string {
  const last = a.warmUp.last;
  if (!last) return a.warmUp.enabled ? 'warm-up on, none yet' : '';
  const ago = formatDuration(Math.max(0, Math.round((now - Date.parse(last.at)) / 1000)));
  const result = last.ok ? 'ok' : `failed: ${last.status === 0 ? 'no answer' : last.status}`;
  return `warm-up ${result} (${last.model}, after the ${last.window} reset, ${ago} ago)`;
}

/** The account's admission in words — its learned concurrency limit, its ramp, its queue — or '' when it has none of them. */
export function concurrencyText(a: AccountReport): string {
  const parts: string[] = [];
  if (a.concurrencyLimit !== null) parts.push(`at most ${a.concurrencyLimit} at once (learned from its throttles)`);
  if (a.rampWindow !== null) parts.push(`ramping up: ${a.rampWindow} awaiting a first answer at once`);
  if (a.queued > 0) parts.push(`${a.queued} waiting for room`);
  return parts.join(' · ');
}

const REASONS: Record<string, string> = {
  availability: 'it is usable and the others are not',
  cooldown_recovery: 'it recovers soonest',
  quota_evidence: 'its quota is better known',
  session_headroom: 'it is below the 5-hour soft limit',
  scoped_headroom: "it is below the model's weekly limit",
  weekly_reset: 'its weekly allowance expires soonest',
  forecast_fits: "the session's expected work fits it before its windows reset",
  forecast_expiry: "the session's expected work can use its weekly allowance, which expires soonest",
  forecast_margin: "it has the most room for the session's expected work",
  session_reset: 'its 5-hour window resets soonest',
  scoped_utilization: 'its model window is fullest (finish it first)',
  weekly_utilization: 'its weekly window is fullest (finish it first)',
  headroom: 'it has the most headroom',
  configured_primary: 'it is the primary account',
  insertion_order: 'it comes first in the account order',
  single_account: 'it is the only account',
  session_affinity: 'the session is bound to it',
  preferred_primary: 'it is the preferred primary',
  spill_inflight: 'the first choice is busy (spill)',
  recovery_probe: 'its quota reads recovered: this request re-checks it',
  evidence_probe: 'nothing is known of its quota yet: this request reads it',
  sticky_reallocation: "the session's account is over its sticky threshold and this one is below",
  earlier_reset: 'its weekly window resets on the earliest day (prefer-earlier-reset)',
  over_sticky_threshold: 'it is over a sticky reallocation threshold',
  round_robin: 'it is next in round-robin order',
  configured_order: 'it comes first in the configured order',
  routing_policy_error: 'the policy failed, so plain expiry-first chose',
  fallback_last: 'fallback accounts are tried last',
  cooldown: 'it is cooling down',
  hard_saturated: 'a usage window is exhausted',
  scoped_rejected: "the model's weekly window is exhausted",
  needs_sign_in: 'it needs you to sign in again',
};

/** A reason code in words. */
export function explainReason(code: string): string {
  return REASONS[code] ?? code.replace(/_/g, ' ');
}

/**
 * Why a recorded request went where it went, in words: the planner's reason when the account it
 * chose served; when another served (a failover), what the attempts met and which account was
 * chosen first and why (`failed over (work 429 throttle); work was chosen first: its weekly
 * allowance expires soonest`), so a failover never shows the first choice's reason as the server's.
 */
export function decisionReasonText(r: Pick<DecisionRecord, 'selectionReason' | 'servedBy' | 'attempts' | 'candidates'>): string {
  const chosen = r.candidates.find((c) => c.verdict === 'selected')?.account;
  if (!chosen || r.servedBy === null || r.servedBy === chosen) return explainReason(r.selectionReason);
  const met = r.attempts.filter((a) => a.account !== r.servedBy).map((a) => `${a.account} ${a.status || '-'} ${a.result.replace(/_/g, ' ')}`);
  return `failed over${met.length ? ` (${met.join(', ')})` : ''}; ${chosen} was chosen first: ${explainReason(r.selectionReason)}`;
}

/** A candidate's verdict as recorded or previewed (`filter` is absent in records from before the planner stages). */
export type VerdictView = Pick<CandidateVerdict, 'rank' | 'verdict' | 'reason' | 'forecast'> & { filter?: FilterVerdict };

/**
 * One candidate's verdict in words at `now` (epoch ms): the winner's reason for the winner, the
 * filter's verdict for an unusable account, and for a loser why it lost, from its own figures
 * ("eligible — ranked 2nd: weekly reset later (Fri 09:00)"): no loser carries the winner's reason.
 */
export function candidateText(v: VerdictView, figures: LossFigures, now: number): string {
  if (v.verdict === 'selected') return `selected — ${explainReason(v.reason)}${v.forecast ? ` (${forecastText(v.forecast)})` : ''}`;
  if (v.verdict === 'unusable') return v.filter ? verdictText(v.filter, now) : `not usable — ${explainReason(v.reason)}`;
  return lossText(v.reason, v.rank, v.forecast ? { ...figures, forecast: v.forecast } : figures, now, v.filter);
}

const isoMs = (iso: string | null): number => (iso ? Date.parse(iso) : Infinity);

/** The loser's own figures from its `/status` report. */
export function reportFigures(a: AccountReport): LossFigures {
  return { weeklyResetMs: isoMs(a.weekly.resetsAt), sessionResetMs: isoMs(a.session.resetsAt), weeklyUsed: a.weekly.used, headroom: a.headroom };
}

/** Why the router would or would not pick this account for a new request now (`now`: epoch ms, default the clock). */
export function whyNow(a: AccountReport, s: StatusReport, now = Date.now()): string {
  if (!a.enabled) return 'Disabled: never picked.';
  const v = s.preview.verdicts.find((x) => x.account === a.label);
  if (!v) return 'Not a candidate.';
  // The plan still puts an unusable account first when nothing else is left (the only account): it cannot serve.
  if (v.verdict === 'selected' && !a.usable) return `Not usable now: ${explainReason(a.unusableReason ?? 'unusable')}.`;
  if (v.verdict === 'selected') {
    const bound = a.boundSessions > 0 ? `Serves ${boundSessionsText(a.boundSessions)} (affinity), and a` : 'A';
    return `${bound} new request would go here: ${explainReason(v.reason)}.`;
  }
  if (v.verdict === 'unusable') return `Not picked now: ${explainReason(v.reason)}${v.filter ? ` (${verdictText(v.filter, now)})` : ''}.`;
  // Bound sessions keep coming here (session affinity) while new ones go elsewhere: say both.
  if (a.boundSessions > 0 && a.usable)
    return `Serves ${boundSessionsText(a.boundSessions)} (affinity) — new sessions go to ${previewWinner(s) ?? 'another account'}: ${candidateText(v, reportFigures(a), now)}.`;
  return `Not picked now: ${candidateText(v, reportFigures(a), now)}.`;
}

/** Usable/total non-fallback accounts and the best headroom among the usable ones. */
export function poolSummary(s: StatusReport): { usable: number; total: number; bestHeadroom: number | null } {
  const pool = s.accounts.filter((a) => !a.fallback && a.enabled);
  const headrooms = pool.filter((a) => a.usable && a.headroom !== null).map((a) => a.headroom as number);
  return { usable: s.usableAccounts, total: pool.length, bestHeadroom: headrooms.length ? Math.max(...headrooms) : null };
}

/** Eligibility in a word or two, for an Active account that a new request would still pass over. */
const ELIGIBILITY_BRIEF: Partial<Record<FilterVerdict['code'], string>> = {
  soft_limit: 'at soft limit',
  over_cap: 'at in-flight cap',
  scoped_exhausted: 'model limit',
  over_sticky_threshold: 'over sticky threshold',
  cooling: 'cooling',
  window_exhausted: 'limited',
  needs_sign_in: 'needs sign-in',
};

/**
 * The Accounts view's description, short enough for the default sidebar width: the two windows,
 * after the status when it is not plain Active and eligible (`5h 35% · 7d 62%`,
 * `Paused · 5h 35% · 7d 62%`, `at soft limit · 5h 98% · 7d 40%`). The full status, eligibility and
 * countdowns are in the tooltip.
 */
export function accountBrief(a: AccountReport): string {
  const windows = `5h ${percent(a.session.used)} · 7d ${percent(a.weekly.used)}`;
  if (a.status !== 'Active') return `${a.status} · ${windows}`;
  const code = a.eligibility?.code;
  const brief = code === undefined ? 'not considered' : code === 'eligible' ? null : (ELIGIBILITY_BRIEF[code] ?? code.replace(/_/g, ' '));
  return brief ? `${brief} · ${windows}` : windows;
}

/**
 * The account's grant in words (src/accounts/grant.ts): `signed in 12 d ago`, `signed in today`,
 * `grant age unknown`; '' for an API-key account, or one whose credentials were not read yet.
 */
export function grantText(a: AccountReport): string {
  return a.grant ? grantAgeText(a.grant.ageDays) : '';
}

/** The grant's age short, for a table cell: `12 d ago`, `today`, `unknown`; '' as {@link grantText}. */
export function grantCell(a: AccountReport): string {
  if (!a.grant) return '';
  return a.grant.ageDays === null ? 'unknown' : a.grant.ageDays === 0 ? 'today' : `${a.grant.ageDays} d ago`;
}

/** The warning of a grant at least `routing.grant-warn-days` old (`signed in 23 d ago: sign in again soon …`), or ''. */
export function grantWarning(a: AccountReport): string {
  return a.grant?.warn && a.grant.ageDays !== null ? grantWarningText(a.grant.ageDays) : '';
}

/**
 * The shared store's line (docs/shared-pool.md), or null when none is configured:
 * `store: redis://host:6379/0 connected`, or `… unreachable since <ISO> (5m); serving from this machine's copy`.
 */
export function storeText(store: StoreReport | null | undefined, now: number): string | null {
  if (!store) return null;
  const problem = store.problem ? `; ${store.problem}` : '';
  if (store.state === 'connected') return `store: ${store.url} connected${problem}`;
  if (store.state === 'connecting') return `store: ${store.url} connecting`;
  return `store: ${store.url} unreachable since ${store.since} (${formatDuration(Math.max(0, now - Date.parse(store.since)) / 1000)}); serving from this machine's copy`;
}
