/**
 * The design seed's rollout metrics, computed from a decision log. Pure.
 *
 * Definitions (so two reports are comparable):
 * - session request: a `/v1/messages` decision with a sticky key (its hash: a session id
 *   or a conversation fingerprint) that an account served;
 * - mid-session switch: a session request served by a different non-fallback
 *   account than the session's previous non-fallback served request;
 * - forced switch: one whose previous account could not keep the session for its quota or
 *   sign-in — the switching request's plan saw it exhausted (5h, 7d, account-wide or the
 *   model's window), at the session soft limit, signed out, revoked, disabled or removed, or
 *   its attempt there answered so; every other switch (a throttle, an overload, a network
 *   error, a better score) is unforced;
 * - A→B→A ping-pong: a switch back to the account the session left, within
 *   5 minutes of leaving it;
 * - extra cache-creation tokens: cache-creation input tokens reported on the
 *   switching requests (the prefix written again on the new account);
 * - share of wall-clock time with ≤ 1 usable account: between consecutive
 *   decisions, the interval counts for the earlier decision's usable count;
 * - fallback share: served requests answered by a fallback account.
 */
import type { DecisionRecord } from './decision';

/** Ping-pong window (ms). */
export const PING_PONG_WINDOW_MS = 5 * 60_000;

export interface PolicyReport {
  decisions: number;
  sessionRequests: number;
  sessions: number;
  midSessionSwitches: number;
  /** Mid-session switches not forced by quota or sign-in (see the definitions above). */
  unforcedSwitches: number;
  switchesPer1000SessionRequests: number;
  pingPongPairs: number;
  /** Cache-creation tokens on switching requests. */
  switchCacheCreationTokens: number;
  /** All cache-creation tokens, for scale. */
  cacheCreationTokens: number;
  cacheReadTokens: number;
  /** Fraction (0–1) of the logged wall-clock span with at most one usable account. */
  shareTimeAtMostOneUsable: number;
  /** Fraction (0–1) of served requests answered by a fallback account. */
  fallbackShare: number;
  bySelectionReason: Record<string, number>;
  byOutcome: Record<string, number>;
}

/** Filter verdicts of an account that cannot keep a session for its quota or sign-in (src/routing/planner/verdict.ts). */
const QUOTA_VERDICTS: ReadonlySet<string> = new Set(['window_exhausted', 'scoped_exhausted', 'soft_limit', 'needs_sign_in', 'disabled']);
/** Cooldown reasons that say the same. */
const QUOTA_COOLDOWNS: ReadonlySet<string> = new Set(['window_exhausted', 'forbidden', 'needs_sign_in']);
/** Attempt results that say the same (src/quota/classify.ts kinds; `refresh_*` from a failed token refresh, except a network failure). */
const QUOTA_RESULTS: ReadonlySet<string> = new Set([
  'window_exhausted',
  'model_scoped_exhausted',
  'entitlement',
  'unauthorized',
  'forbidden',
  'refresh_invalid_grant',
  'refresh_no_refresh_token',
  'refresh_rejected',
]);

/** Whether the switch in `r` away from `left` was forced by quota or sign-in. */
function forcedSwitch(r: DecisionRecord, left: string): boolean {
  const c = r.candidates.find((x) => x.account === left);
  if (!c) return true; // removed or disabled since
  const f = c.filter;
  if (f && (QUOTA_VERDICTS.has(f.code) || (f.code === 'cooling' && QUOTA_COOLDOWNS.has(f.reason)))) return true;
  return r.attempts.some((a) => a.account === left && QUOTA_RESULTS.has(a.result));
}

function inc(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}

/** Computes the report over records in any order (they are sorted by time). */
export function computeReport(input: readonly DecisionRecord[]): PolicyReport {
  const records = [...input].sort((a, b) => Date.parse(a.ts) - Date.parse(b.ts));
  const bySelectionReason: Record<string, number> = {};
  const byOutcome: Record<string, number> = {};
  const last = new Map<string, { account: string; atMs: number; from?: { account: string; leftAtMs: number } }>();
  let sessionRequests = 0;
  let switches = 0;
  let unforced = 0;
  let pingPong = 0;
  let switchCache = 0;
  let cacheCreation = 0;
  let cacheRead = 0;
  let served = 0;
  let fallbackServed = 0;
  const sessions = new Set<string>();

  for (const r of records) {
    inc(bySelectionReason, r.selectionReason);
    inc(byOutcome, r.outcome);
    if (r.path !== '/v1/messages' || !r.servedBy) continue;
    served++;
    cacheCreation += r.usage?.cacheCreationInputTokens ?? 0;
    cacheRead += r.usage?.cacheReadInputTokens ?? 0;
    if (r.servedByFallback) {
      fallbackServed++;
      continue;
    }
    const key = r.stickyKeyHash;
    if (!key) continue;
    sessionRequests++;
    sessions.add(key);
    const at = Date.parse(r.ts);
    const prev = last.get(key);
    if (prev && prev.account !== r.servedBy) {
      switches++;
      if (!forcedSwitch(r, prev.account)) unforced++;
      switchCache += r.usage?.cacheCreationInputTokens ?? 0;
      if (prev.from && prev.from.account === r.servedBy && at - prev.from.leftAtMs <= PING_PONG_WINDOW_MS) pingPong++;
      last.set(key, { account: r.servedBy, atMs: at, from: { account: prev.account, leftAtMs: at } });
    } else {
      last.set(key, { account: r.servedBy, atMs: at, from: prev?.from });
    }
  }

  let lowTime = 0;
  let totalTime = 0;
  for (let i = 0; i + 1 < records.length; i++) {
    const dt = Date.parse(records[i + 1].ts) - Date.parse(records[i].ts);
    if (!(dt > 0)) continue;
    totalTime += dt;
    if ((records[i].usableAccounts ?? 0) <= 1) lowTime += dt;
  }

  return {
    decisions: records.length,
    sessionRequests,
    sessions: sessions.size,
    midSessionSwitches: switches,
    unforcedSwitches: unforced,
    switchesPer1000SessionRequests: sessionRequests ? (switches * 1000) / sessionRequests : 0,
    pingPongPairs: pingPong,
    switchCacheCreationTokens: switchCache,
    cacheCreationTokens: cacheCreation,
    cacheReadTokens: cacheRead,
    shareTimeAtMostOneUsable: totalTime ? lowTime / totalTime : records.length && (records[0].usableAccounts ?? 0) <= 1 ? 1 : 0,
    fallbackShare: served ? fallbackServed / served : 0,
    bySelectionReason,
    byOutcome,
  };
}

/** The report as text, one metric a line. */
export function formatReport(r: PolicyReport): string {
  const pct = (f: number) => `${(f * 100).toFixed(1)}%`;
  const lines = [
    `decisions: ${r.decisions}`,
    `session requests: ${r.sessionRequests} (${r.sessions} sessions)`,
    `mid-session switches: ${r.midSessionSwitches} (${r.switchesPer1000SessionRequests.toFixed(2)} per 1,000 session requests)`,
    `mid-session switches not forced by quota or sign-in: ${r.unforcedSwitches}`,
    `A→B→A ping-pong pairs within 5 minutes: ${r.pingPongPairs}`,
    `cache-creation tokens on switches: ${r.switchCacheCreationTokens} (of ${r.cacheCreationTokens} cache-creation, ${r.cacheReadTokens} cache-read)`,
    `wall-clock time with ≤ 1 usable account: ${pct(r.shareTimeAtMostOneUsable)}`,
    `fallback share: ${pct(r.fallbackShare)}`,
    'decisions by selection reason:',
    ...Object.entries(r.bySelectionReason)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `  ${k}: ${v}`),
    'decisions by outcome:',
    ...Object.entries(r.byOutcome)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `  ${k}: ${v}`),
  ];
  return lines.join('\n') + '\n';
}
