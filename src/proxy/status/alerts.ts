/**
 * Which alerts a window shows, decided from successive `/status` reports: each once per episode
 * (the state entering the condition), never again while it lasts, however often the report is
 * read. Pure: the time is an argument; the extension turns alerts into notifications with actions.
 *
 * - `needs_sign_in`: accounts that started to need sign-in since the last report (one alert for all
 *   of them); an account's episode ends when it no longer needs sign-in.
 * - `pool_exhausted`: no account of the pool is usable, and the first recovers in at least
 *   {@link EXHAUSTED_MIN_WAIT_MS} or at an unknown time (a pause of seconds is no news); the episode
 *   ends when an account of the pool is usable again.
 * - `grant_old`: an enabled OAuth account's sign-in is at least `routing.grant-warn-days` old
 *   (`AccountReport.grant.warn`): one alert per account and grant — its refreshes keep the grant
 *   time, so they never repeat it; a new sign-in is a new grant. Not while it needs sign-in (that
 *   alert says more).
 */
import type { StatusReport } from './status';

/** A wait shorter than this (ms) is a pause Claude Code rides out by itself: no alert. */
export const EXHAUSTED_MIN_WAIT_MS = 60_000;

export type Alert =
  | { kind: 'needs_sign_in'; accounts: Array<{ label: string; reason: string }> }
  | {
      kind: 'pool_exhausted';
      /** Accounts of the pool. */
      total: number;
      /** The account that recovers first, and what it waits for. */
      account: string;
      what: string;
      /** Epoch ms it recovers at; null when unknown. */
      untilMs: number | null;
      /** The pause is Anthropic's (overloaded, server errors), not a limit of the user's. */
      upstreamTrouble: boolean;
    }
  | {
      kind: 'grant_old';
      label: string;
      /** Whole days since the sign-in (days). */
      ageDays: number;
    };

export class AlertEpisodes {
  private readonly signIn = new Set<string>();
  private exhausted = false;
  /** `label NUL grantedAt` of the grants already warned about. */
  private readonly oldGrants: Set<string>;

  /** @param warnedGrants the grants warned about before (`warnedGrants()` of an earlier run): not again */
  constructor(warnedGrants: Iterable<string> = []) {
    this.oldGrants = new Set(warnedGrants);
  }

  /** The grants warned about so far (opaque keys: label and grant time, never a token), to keep across runs. */
  warnedGrants(): string[] {
    return [...this.oldGrants];
  }

  /** The alerts `s` starts, at `now` (epoch ms). */
  next(s: StatusReport, now: number): Alert[] {
    const alerts: Alert[] = [];
    const needing = s.accounts.filter((a) => a.enabled && a.needsSignIn);
    const started = needing.filter((a) => !this.signIn.has(a.label));
    this.signIn.clear();
    for (const a of needing) this.signIn.add(a.label);
    if (started.length) alerts.push({ kind: 'needs_sign_in', accounts: started.map((a) => ({ label: a.label, reason: a.needsSignInReason ?? 'its sign-in was refused' })) });
    alerts.push(...this.grantAlerts(s));

    const pool = s.accounts.filter((a) => a.enabled && !a.fallback);
    const r = s.poolRecovery;
    if (pool.length === 0 || s.usableAccounts > 0 || !r) {
      this.exhausted = false;
      return alerts;
    }
    const untilMs = r.at === null ? null : Date.parse(r.at);
    // Every account waiting only for sign-in is the sign-in alert's news.
    const onlySignIn = pool.every((a) => a.needsSignIn);
    if (!this.exhausted && !onlySignIn && (untilMs === null || untilMs - now >= EXHAUSTED_MIN_WAIT_MS)) {
      this.exhausted = true;
      alerts.push({
        kind: 'pool_exhausted',
        total: pool.length,
        account: r.account,
        what: r.what,
        untilMs,
        upstreamTrouble: r.cooldownReason === 'overloaded' || r.cooldownReason === 'server_error',
      });
    }
    return alerts;
  }

  /** A `grant_old` alert for each grant past the warning not warned about yet. */
  private grantAlerts(s: StatusReport): Alert[] {
    const out: Alert[] = [];
    for (const a of s.accounts) {
      const g = a.grant;
      if (!g?.warn || g.ageDays === null || !a.enabled || a.needsSignIn) continue;
      const key = `${a.label}\0${g.grantedAt}`;
      if (this.oldGrants.has(key)) continue;
      this.oldGrants.add(key);
      out.push({ kind: 'grant_old', label: a.label, ageDays: g.ageDays });
    }
    return out;
  }
}
