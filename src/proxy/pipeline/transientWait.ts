/**
 * Waiting for an account that only pauses (docs/routing.md#waiting): every such wait holds the
 * request in the waiting room's queue of that account, whose paced release lets the waiters go one
 * at a time from the end of its cooldown. Three waits use it:
 * - `blip`: the session's bound account only blips (a transient cooldown ending within
 *   `session-affinity-blip-wait-ms`): the session waits for it instead of moving; or, once, the
 *   account below the session soft limit that a session's request would otherwise pass over for
 *   one past it ({@link blipBelowSoftLimit});
 * - `same_account_retry`: the account just answered a short throttle (sameAccountRetry.ts);
 * - `transient`: no account can serve and the first to recover only pauses for a throttle, an
 *   overload or server errors ending within `transient-wait-max-ms`: the request is held and
 *   planned again.
 * A request waits at most {@link MAX_TOTAL_WAIT_MS} in all; a full waiting room holds nothing (the
 * caller answers at once), and a client that leaves gives its place back at once.
 */
import type { WaitRecord } from '../../routing/decision';
import type { PlanAccount } from '../../routing/plan';
import { boundSituation } from '../../routing/rebind';
import { waitableRecovery } from '../../routing/recovery';
import type { HeldAnswer } from '../relay/clientAnswer';
import type { RouterState } from '../state/routerState';
import { waitingLimits, type WaitEnd } from '../state/waitingRoom';
import type { RequestContext } from './context';
import { accountMetrics, atInflightCap, plannedRecoveryInputs, usableNow } from './eligibility';
import { planFor } from './plan';

/** The longest one request waits, all its waits together: 120 s (the design seed's bound; Claude Code's own request timeout is 600 s). */
export const MAX_TOTAL_WAIT_MS = 120_000;

/** One wait lasts at most this long past the end of the cooldown it waits for, ms: the paced release spreads the waiters over it. */
export const MAX_RELEASE_SPREAD_MS = 15_000;

/** Why a request waits for an account to recover (the decision record's `waits[].why`; `bound_room`, a wait for room, is admission.ts's). */
export type WaitWhy = 'blip' | 'same_account_retry' | 'transient';

const COOLING_QUEUE = 'cooling:';

/** The waiting-room queue of the requests waiting for `label` to recover. */
export function coolingQueue(label: string): string {
  return COOLING_QUEUE + label;
}

/** The paced release's readiness of a cooling queue: ms until its account's cooldown ends (0 when it has none, or the queue is not a cooling queue). */
export function coolingReadyInMs(state: RouterState, now: () => number): (queue: string) => number {
  return (queue) => {
    if (!queue.startsWith(COOLING_QUEUE)) return 0;
    const until = state.cooldowns.get(queue.slice(COOLING_QUEUE.length))?.untilMs;
    return until === undefined ? 0 : until - now();
  };
}

/** Ms this request has waited so far. */
function waitedMs(ctx: RequestContext): number {
  let ms = 0;
  for (const w of ctx.waits ?? []) ms += w.ms;
  return ms;
}

/**
 * Holds the request until `label` recovers and the paced release lets it go, for at most
 * `untilMs` (epoch ms) + {@link MAX_RELEASE_SPREAD_MS} and within the request's total wait bound;
 * records the wait.
 * @returns how the hold ended; undefined when it did not wait (the room was full, or the bound is spent)
 */
export async function holdForAccount(ctx: RequestContext, label: string, why: WaitWhy, untilMs: number): Promise<WaitEnd | undefined> {
  const s = ctx.services;
  const t0 = s.now();
  const maxMs = Math.min(MAX_TOTAL_WAIT_MS - waitedMs(ctx), untilMs - t0 + MAX_RELEASE_SPREAD_MS);
  if (maxMs <= 0) return undefined;
  const queue = coolingQueue(label);
  const held = s.waitingRoom.hold({ queue, bodyBytes: ctx.body.length, maxMs, client: ctx.client }, waitingLimits(ctx.generation.config.policy));
  const record: WaitRecord = { why, account: label, ms: 0, end: 'refused' };
  (ctx.waits ??= []).push(record);
  if (!held) return undefined;
  s.coolingRelease.start(queue);
  const end = await held;
  record.ms = s.now() - t0;
  record.end = end;
  s.log.debug(`wait ${ctx.requestId}: ${why} for ${label}, ${record.ms} ms (${end})`);
  return end;
}

/** What the attempt loop does after a wait: try the account it waited for, plan again (the account did not recover, or the wait showed the pool changed), or go on (no wait happened). */
export type AfterWait = 'try' | 'replan' | 'go_on';

/** The attempt loop's next move after a hold that ended with `end` (undefined: it did not wait). */
export function afterWait(ctx: RequestContext, account: PlanAccount, end: WaitEnd | undefined): AfterWait {
  if (end === undefined || end === 'client_gone') return 'go_on';
  return usableNow(ctx, account.id) && !atInflightCap(ctx, account) ? 'try' : 'replan';
}

/**
 * The blip row of the binding table: when `account` is the session's bound account placed first
 * while a transient cooldown ending within `session-affinity-blip-wait-ms` keeps it out, waits
 * for it.
 */
export async function waitForBoundAccount(ctx: RequestContext, account: PlanAccount): Promise<AfterWait> {
  const affinity = ctx.plan.affinity;
  if (!affinity.applied || affinity.boundAccount !== account.id) return 'go_on';
  const s = ctx.services;
  const now = s.now();
  const cooldown = s.state.cooldowns.get(account.id);
  const situation = boundSituation(accountMetrics(s.state, account.id, ctx.params, now), cooldown?.reason, now, ctx.generation.config.policy.sessionAffinityBlipWaitMs);
  if (situation !== 'blip' || !cooldown) return 'go_on';
  return afterWait(ctx, account, await holdForAccount(ctx, account.id, 'blip', cooldown.untilMs));
}

/**
 * The first account of `order` below the session soft limit that only blips — a transient cooldown
 * ending within `session-affinity-blip-wait-ms`, as the binding table's blip row reads it — for a
 * session's request that would otherwise go past the soft limit (the attempt loop waits for it
 * once; docs/routing.md#concurrency-limits). Unusable accounts come last in a plan, so the whole
 * order is looked at.
 * @returns the account and the end of its cooldown (epoch ms), or undefined
 */
export function blipBelowSoftLimit(ctx: RequestContext, order: readonly PlanAccount[]): { account: PlanAccount; untilMs: number } | undefined {
  const s = ctx.services;
  const now = s.now();
  const blipWaitMs = ctx.generation.config.policy.sessionAffinityBlipWaitMs;
  for (const account of order) {
    const cooldown = account.fallback ? undefined : s.state.cooldowns.get(account.id);
    if (!cooldown) continue;
    const m = accountMetrics(s.state, account.id, ctx.params, now);
    if (!m.sessionSaturated && boundSituation(m, cooldown.reason, now, blipWaitMs) === 'blip') return { account, untilMs: cooldown.untilMs };
  }
  return undefined;
}

/** Plans the request again (after a wait: the pool has changed), keeping everything else of it. */
export function replan(ctx: RequestContext): void {
  const s = ctx.services;
  ctx.plan = planFor(s.state, ctx.generation.config, ctx.params, ctx.info.sticky.keyHash, s.now(), ctx.route === 'messages', ctx.requestId);
}

/**
 * After the planned accounts could not serve: when the answer would be "no usable account" and the
 * pool's soonest recovery is a transient cooldown within `transient-wait-max-ms` (and the total wait
 * bound), holds the request until that account recovers, then plans it again.
 * @param held the upstream error the attempts hold, if any
 * @param cappedOut an account was skipped only for its in-flight cap (not a cooldown: not waited for here)
 * @returns whether to try the (new) plan; false leaves the answer to the relay step
 */
export async function transientWait(ctx: RequestContext, held: HeldAnswer | undefined, cappedOut: boolean): Promise<boolean> {
  const policy = ctx.generation.config.policy;
  if (policy.transientWaitMaxMs <= 0 || cappedOut || ctx.client.gone || ctx.res.headersSent) return false;
  // Only what would be answered "no usable account": nothing held, or a 429 while no planned account is usable.
  if ((held && held.status !== 429) || ctx.plan.order.some((a) => usableNow(ctx, a.id))) return false;
  const s = ctx.services;
  const now = s.now();
  const first = waitableRecovery(plannedRecoveryInputs(ctx, now), now, Math.min(policy.transientWaitMaxMs, MAX_TOTAL_WAIT_MS - waitedMs(ctx)));
  if (!first) return false;
  const end = await holdForAccount(ctx, first.label, 'transient', first.atMs);
  if (end === undefined) return false;
  if (end !== 'client_gone') replan(ctx);
  return true;
}
