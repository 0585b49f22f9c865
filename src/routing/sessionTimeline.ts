/**
 * Sessions over time, from decision records: per recent session (by its sticky-key hash, never a
 * raw id) the account that served each request, and for every switch of account its cause. Pure.
 *
 * A switch is a served `/v1/messages` request of a session whose account differs from the one that
 * served the session's previous served request (the definition of report.ts, fallback accounts
 * included here because the timeline shows every request). Its cause, first match wins:
 * - the request failed over: the first failed attempt's class — `quota` (a window exhausted),
 *   `sign_in` (401 or a failed token refresh), otherwise `transient` (throttle, overload, server or
 *   network error);
 * - the plan moved it: `spill` (spill-inflight) or `sticky_threshold` (sticky reallocation);
 * - the bound account was skipped (`affinity.skippedReason`): `quota` (unusable for a window, or at
 *   the 5-hour soft limit), `sign_in`, `transient` (cooling for another reason), `sticky_threshold`,
 *   `unbound` (the binding expired), `other` (disabled);
 * - no binding was in force (affinity off, or the session was not bound yet): `unbound`.
 */
import type { DecisionRecord, RecordedCandidate } from './decision';
import type { StickyKind } from './identify';

/** Why a session's request went to another account than its previous one. */
export type SwitchCause = 'quota' | 'sign_in' | 'transient' | 'spill' | 'sticky_threshold' | 'unbound' | 'other';

/** One request of a session, as the timeline shows it. */
export interface TimelineRequest {
  /** Epoch ms the request arrived. */
  atMs: number;
  requestId: string;
  /** The account that served it; null when none did (no usable account, an error). */
  account: string | null;
  outcome: DecisionRecord['outcome'];
  /** True when an account served it and a different one served the session's previous served request. */
  switched: boolean;
  /** For a switch, its cause; null otherwise. */
  cause: SwitchCause | null;
  /** For a switch, the code behind the cause: the failed attempt's class, the skipped account's cooldown reason or filter verdict, the selection or skip reason. */
  causeCode: string | null;
}

/** One session's lane. */
export interface SessionLane {
  /** The sticky-key hash, 16 hex digits. */
  hash: string;
  kind: StickyKind;
  firstMs: number;
  lastMs: number;
  /** Oldest first; at most `maxRequests` of the latest. */
  requests: TimelineRequest[];
  switches: number;
  /** The accounts that served it, in order of first use. */
  accounts: string[];
}

const QUOTA_RESULTS = new Set(['window_exhausted', 'model_scoped_exhausted']);

function attemptCause(result: string): SwitchCause {
  if (QUOTA_RESULTS.has(result)) return 'quota';
  if (result === 'unauthorized' || result.startsWith('refresh_')) return 'sign_in';
  return 'transient';
}

/**
 * Why the bound account was unusable, from its own candidate's filter verdict (or, in older records,
 * its recorded metrics): the cause, and the code behind it (a cooldown's reason, e.g. `throttle`).
 */
function unusableCause(c: RecordedCandidate | undefined): { cause: SwitchCause; code: string } {
  const f = c?.filter;
  if (f) {
    if (f.code === 'window_exhausted' || f.code === 'scoped_exhausted' || f.code === 'soft_limit') return { cause: 'quota', code: f.code };
    if (f.code === 'needs_sign_in') return { cause: 'sign_in', code: f.code };
    if (f.code === 'cooling') return { cause: f.reason === 'window_exhausted' ? 'quota' : 'transient', code: f.reason };
    if (f.code === 'disabled') return { cause: 'other', code: f.code };
  }
  const reason = c?.metrics.unusableReason ?? 'unusable';
  return { cause: reason === 'needs_sign_in' ? 'sign_in' : reason === 'cooldown' ? 'transient' : 'quota', code: reason };
}

/** The cause of a switch to `r.servedBy` (see the module comment for the order). */
function switchCause(r: DecisionRecord): { cause: SwitchCause; code: string } {
  const failed = r.attempts.find((a) => a.result !== 'success' && a.account !== r.servedBy);
  if (failed) return { cause: attemptCause(failed.result), code: failed.result };
  if (r.selectionReason === 'spill_inflight') return { cause: 'spill', code: r.selectionReason };
  if (r.selectionReason === 'sticky_reallocation') return { cause: 'sticky_threshold', code: r.selectionReason };
  const skipped = r.affinity.skippedReason;
  if (r.affinity.sessionBound && skipped) {
    switch (skipped) {
      case 'unusable':
        return unusableCause(r.candidates.find((c) => c.account === r.affinity.boundAccount));
      case 'session_saturated':
        return { cause: 'quota', code: skipped };
      case 'over_sticky_threshold':
        return { cause: 'sticky_threshold', code: skipped };
      case 'expired':
      case 'no_session':
        return { cause: 'unbound', code: skipped };
      case 'disabled':
        return { cause: 'other', code: skipped };
    }
  }
  return { cause: 'unbound', code: r.affinity.sessionBound ? r.selectionReason : 'not_bound' };
}

/**
 * The lanes of the `maxSessions` sessions seen last in `records` (any order), most recent first;
 * each keeps its latest `maxRequests` requests. Only `/v1/messages` requests with a sticky key.
 */
export function sessionTimeline(records: readonly DecisionRecord[], maxSessions = 8, maxRequests = 200): SessionLane[] {
  const sorted = records.filter((r) => r.path === '/v1/messages' && r.stickyKeyHash).sort((a, b) => Date.parse(a.ts) - Date.parse(b.ts));
  const lanes = new Map<string, SessionLane & { previous: string | null }>();
  for (const r of sorted) {
    const hash = r.stickyKeyHash!;
    const atMs = Date.parse(r.ts);
    let lane = lanes.get(hash);
    if (!lane) {
      lane = { hash, kind: r.stickyKind, firstMs: atMs, lastMs: atMs, requests: [], switches: 0, accounts: [], previous: null };
      lanes.set(hash, lane);
    }
    const switched = r.servedBy !== null && lane.previous !== null && r.servedBy !== lane.previous;
    const why = switched ? switchCause(r) : null;
    lane.requests.push({ atMs, requestId: r.requestId, account: r.servedBy, outcome: r.outcome, switched, cause: why?.cause ?? null, causeCode: why?.code ?? null });
    if (lane.requests.length > maxRequests) lane.requests.shift();
    lane.lastMs = atMs;
    if (switched) lane.switches++;
    if (r.servedBy !== null) {
      lane.previous = r.servedBy;
      if (!lane.accounts.includes(r.servedBy)) lane.accounts.push(r.servedBy);
    }
  }
  return [...lanes.values()]
    .sort((a, b) => b.lastMs - a.lastMs)
    .slice(0, maxSessions)
    .map(({ previous: _previous, ...lane }) => lane);
}
