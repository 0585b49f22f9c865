/**
 * Admission of a `/v1/messages` request onto an account, for the attempt loop: whether the account
 * has room (its `max-inflight-per-account`, the concurrency limit learned from its throttles, its
 * admission ramp), what an attempt teaches (a concurrency throttle cuts the limit; a committed
 * answer grows the ramp and the limit), who is woken when room appears, and the wait for room in
 * the waiting room (docs/routing.md#concurrency-limits, docs/routing.md#admission-ramp).
 *
 * On a healthy pool (no cap, nothing learned, no ramp, no cooldown) each function returns after a
 * size check or two: no clock read, no allocation, no promise.
 */
import type { AttemptRecord, WaitRecord } from '../../routing/decision';
import type { PlanAccount } from '../../routing/plan';
import type { RoutingPolicy } from '../../routing/policy';
import { isTransientCooldown } from '../../quota/cooldown';
import { rampWindow } from '../state/concurrency';
import { waitingLimits } from '../state/waitingRoom';
import type { RequestContext, RouterServices } from './context';
import { usableNow } from './eligibility';
import { openHerdWindow } from './herd';

/** A ramp that lets this many await their first answer at once has done its work and ends. */
const RAMP_DONE_WINDOW = 32;
/** A waiting request looks again at least this often, ms: room can also appear without a lease being released (a pause or cooldown ends, a reload). */
const RECHECK_MS = 1_000;
/** The attempt result of a concurrency throttle (src/quota/classify.ts). */
const CONCURRENCY_THROTTLE = 'concurrency_throttle';

/** How a wait for room ended: look again, no wait possible (waiting room full, wait bound passed), or the client left. */
export type RoomWait = 'again' | 'refused' | 'gone';

/**
 * Whether `account` can take one more request now. Also starts the account's admission ramp when
 * a herd may be moving onto it (docs/routing.md#admission-ramp). Fallback accounts hold no lease
 * and always have room.
 */
export function hasRoom(ctx: RequestContext, account: PlanAccount): boolean {
  if (account.fallback) return true;
  const s = ctx.services;
  const policy = ctx.generation.config.policy;
  const cap = policy.maxInflightPerAccount;
  if (cap > 0 && s.state.leases.inflight(account.id) >= cap) return false;
  if (s.state.concurrency.quiet && s.state.cooldowns.size === 0) return true;
  const now = s.now();
  if (policy.admissionRamp) startRampIfMoving(s, account.id, now);
  const room = roomOn(s, policy, account.id, now);
  const throttled = ctx.throttledOn?.get(account.id);
  return throttled === undefined ? room > 0 : Math.min(room, throttled - s.state.leases.inflight(account.id)) > 0;
}

/**
 * The most requests in flight on `account` (itself included) with which a request it has just
 * throttled for concurrency goes back there: fewer than it was sent with (`sentInflight`), and no
 * more than the limit just learned (at least 1). A raise of the learned limit is a probe; without
 * this cap the oldest waiter — this request, woken first — would take each probing slot and its
 * throttle, again and again.
 */
export function throttledCap(ctx: RequestContext, account: PlanAccount, sentInflight: number): number {
  const learned = ctx.services.state.concurrency.limit(account.id, ctx.services.now())?.limit ?? Infinity;
  return Math.max(1, Math.min(sentInflight - 1, learned, ctx.throttledOn?.get(account.id) ?? Infinity));
}

/**
 * Called as a lease on `account` is taken: the ticket the request holds while its answer is
 * pending (only for an account with admission state).
 * @returns the requests in flight on the account now, this one included
 */
export function admitted(ctx: RequestContext, account: PlanAccount): number {
  const s = ctx.services;
  const sent = s.state.leases.inflight(account.id);
  const t = s.state.concurrency;
  if (t.quiet) return sent;
  const entry = t.get(account.id);
  if (entry && (entry.ramp || entry.learned)) {
    if (entry.ramp) entry.ramp.pending++;
    ctx.admission = { account: account.id, sentInflight: sent, ramp: entry.ramp };
  }
  return sent;
}

/**
 * Called when an answer is committed to the client: the account has taken the request. Its ramp
 * grows by one (so it doubles per round of answers) and ends once nobody waits for it, or at
 * {@link RAMP_DONE_WINDOW}; its learned limit counts a success; waiters are woken for the room.
 */
export function committed(ctx: RequestContext): void {
  const ticket = ctx.admission;
  if (ticket === undefined) return;
  ctx.admission = undefined;
  const s = ctx.services;
  const t = s.state.concurrency;
  t.succeeded(ticket.account, ticket.sentInflight);
  const ramp = ticket.ramp;
  if (ramp) {
    ramp.pending--;
    ramp.window++;
  }
  wake(s, ctx.generation.config.policy, ticket.account);
  const entry = t.get(ticket.account);
  if (ramp && entry?.ramp === ramp && (s.waitingRoom.waiting(entry.queue) === 0 || rampWindow(ramp, s.now()) >= RAMP_DONE_WINDOW)) t.endRamp(ticket.account);
  tidy(s, ticket.account);
}

/**
 * Called as the lease of an attempt is released, on every path: a request whose answer was not
 * committed no longer counts against the account's ramp.
 */
export function released(ctx: RequestContext): void {
  const ticket = ctx.admission;
  if (ticket === undefined) return;
  ctx.admission = undefined;
  if (ticket.ramp) ticket.ramp.pending--;
}

/**
 * What one finished attempt on `account` (its lease released) means for admission: a concurrency
 * throttle cuts the account's learned limit; an account left unusable starts a herd window and
 * sends its waiters elsewhere; any released lease wakes waiters for the room it leaves.
 * @param rotated the attempt ended with the loop moving on (not served, returned or aborted)
 * @param sentInflight requests in flight on the account when the attempt was sent, itself included
 * @returns true when the attempt was a concurrency throttle: the account did not fail, and the
 *   request may come back to it when it has room
 */
export function settle(ctx: RequestContext, account: PlanAccount, rotated: boolean, attempts: readonly AttemptRecord[], sentInflight: number): boolean {
  const s = ctx.services;
  const t = s.state.concurrency;
  const policy = ctx.generation.config.policy;
  if (!rotated) {
    if (!t.quiet) wake(s, policy, account.id);
    return false;
  }
  const last = attempts[attempts.length - 1];
  if (last?.account === account.id && last.result === CONCURRENCY_THROTTLE) {
    const before = t.get(account.id)?.learned?.limit;
    // Its lease is already released: the count at its answer is the others plus itself.
    const learned = t.throttled(account.id, sentInflight, s.state.leases.inflight(account.id) + 1, s.now());
    if (learned.limit !== before) s.log.info(`concurrency ${account.id}: throttled with ${sentInflight} in flight; at most ${learned.limit} at once from now`);
    wake(s, policy, account.id);
    return true;
  }
  if (!usableNow(ctx, account.id)) {
    // Its sessions' requests move now: whoever takes them starts slowly, and its own waiters go elsewhere.
    // A transient pause moves no herd: its sessions wait for it or come back (docs/routing.md#bindings-and-blips).
    if (policy.admissionRamp && !isTransientCooldown(s.state.cooldowns.get(account.id)?.reason)) openHerdWindow(s, s.now());
    t.endRamp(account.id);
    const entry = t.get(account.id);
    if (entry) s.waitingRoom.wake(entry.queue, Infinity);
    tidy(s, account.id);
    return false;
  }
  if (!t.quiet) wake(s, policy, account.id);
  return false;
}

/**
 * Holds the request in `account`'s queue until room may have appeared (a lease released, a ramp
 * grown, at most {@link RECHECK_MS}), within `queue-wait-max-ms` from `sinceMs` (epoch ms) and the
 * waiting room's bound. The time waited is added to the request's attempts as `queued`.
 */
export async function waitForRoom(ctx: RequestContext, account: PlanAccount, attempts: AttemptRecord[], sinceMs: number): Promise<RoomWait> {
  const s = ctx.services;
  const policy = ctx.generation.config.policy;
  const now = s.now();
  const left = sinceMs + policy.queueWaitMaxMs - now;
  if (left <= 0) return 'refused';
  const entry = s.state.concurrency.entry(account.id);
  const held = s.waitingRoom.hold({ queue: entry.queue, bodyBytes: ctx.body.length, maxMs: Math.min(left, RECHECK_MS), client: ctx.client }, waitingLimits(policy));
  if (!held) {
    tidy(s, account.id);
    return 'refused';
  }
  const end = await held;
  const waited = s.now() - now;
  const last = attempts[attempts.length - 1];
  if (last?.result === 'queued' && last.account === account.id) last.ms += waited;
  else attempts.push({ account: account.id, status: 0, result: 'queued', ms: waited });
  tidy(s, account.id);
  return end === 'client_gone' ? 'gone' : 'again';
}

/**
 * The room row of the binding table (docs/routing.md#bindings-and-blips): a bound session's single
 * request — the session has nothing in flight on its bound account — that finds the account without
 * room waits for room there until `untilMs` (epoch ms) rather than spill to another account (a
 * prompt-cache write). Held in the account's queue, woken like {@link waitForRoom}'s waiters; the
 * wait is one `bound_room` entry of the decision's `waits`.
 * @returns whether the account has room now (false: the bound passed, the waiting room is full, or the client left)
 */
export async function waitForBoundRoom(ctx: RequestContext, account: PlanAccount, untilMs: number): Promise<boolean> {
  const s = ctx.services;
  const limits = waitingLimits(ctx.generation.config.policy);
  const t0 = s.now();
  let record: WaitRecord | undefined;
  for (let now = t0; now < untilMs; now = s.now()) {
    const entry = s.state.concurrency.entry(account.id);
    const held = s.waitingRoom.hold({ queue: entry.queue, bodyBytes: ctx.body.length, maxMs: Math.min(untilMs - now, RECHECK_MS), client: ctx.client }, limits);
    if (!record) (ctx.waits ??= []).push((record = { why: 'bound_room', account: account.id, ms: 0, end: 'refused' }));
    if (!held) break;
    record.end = await held;
    record.ms = s.now() - t0;
    if (record.end === 'client_gone') break;
    if (hasRoom(ctx, account)) {
      tidy(s, account.id);
      return true;
    }
  }
  tidy(s, account.id);
  return false;
}

/** Requests `label` can take now beyond those in flight (its cap, learned limit and ramp; a pause leaves none), by `policy` at `now` (epoch ms). Infinity without any. */
function roomOn(s: RouterServices, policy: RoutingPolicy, label: string, now: number): number {
  const inflight = s.state.leases.inflight(label);
  const cap = policy.maxInflightPerAccount;
  let room = cap > 0 ? cap - inflight : Infinity;
  const t = s.state.concurrency;
  const entry = t.get(label);
  if (!entry) return room;
  const learned = t.limit(label, now);
  if (learned) room = learned.pausedUntilMs > now ? 0 : Math.min(room, learned.limit - inflight);
  // Switching `admission-ramp` off lets a running ramp's waiters go at once.
  if (entry.ramp && policy.admissionRamp) {
    const window = rampWindow(entry.ramp, now);
    if (window >= RAMP_DONE_WINDOW) t.endRamp(label);
    else room = Math.min(room, window - entry.ramp.pending);
  }
  return room;
}

/**
 * Starts `label`'s ramp when many requests may be moving onto it: it is idle while a herd window
 * is open, or it takes its first request after a cooldown ended (once per cooldown) — not after a
 * transient one (throttle, overload, server errors): the sessions that waited it out come back as they left.
 */
function startRampIfMoving(s: RouterServices, label: string, now: number): void {
  const t = s.state.concurrency;
  if (t.get(label)?.ramp) return;
  if (t.herdUntilMs !== 0) {
    if (t.herdUntilMs <= now) t.herdUntilMs = 0;
    else if (s.state.leases.inflight(label) === 0) {
      t.startRamp(label, now);
      return;
    }
  }
  const cd = s.state.cooldowns.get(label);
  if (cd && cd.untilMs <= now && !isTransientCooldown(cd.reason) && t.rampAfterCooldown(label, cd.setAtMs)) t.startRamp(label, now);
}

/**
 * Wakes waiters for the room on `label`: its own queue first, then (a request spills to any
 * account with room) one from each other account's queue while room is left. An account without
 * any limit counts as room for one: the lease it just released.
 */
function wake(s: RouterServices, policy: RoutingPolicy, label: string): void {
  const t = s.state.concurrency;
  if (t.quiet) return;
  let room = roomOn(s, policy, label, s.now());
  if (room === Infinity) room = 1;
  if (room <= 0) return;
  const own = t.get(label);
  if (own) room -= s.waitingRoom.wake(own.queue, room);
  if (room <= 0) return;
  for (const other of t.entries()) {
    if (other === own) continue;
    room -= s.waitingRoom.wake(other.queue, 1);
    if (room <= 0) return;
  }
}

/** Drops `label`'s admission entry once it remembers nothing and nobody waits in its queue. */
function tidy(s: RouterServices, label: string): void {
  const entry = s.state.concurrency.get(label);
  if (entry) s.state.concurrency.tidy(label, s.waitingRoom.waiting(entry.queue));
}
