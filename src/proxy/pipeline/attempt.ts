/**
 * The attempt loop (step 6): try the planned accounts in order (tryAccount.ts
 * makes each call, classifies its answer, sets cooldowns and commits a good
 * answer to the client) within the rotation limits. Another account can be tried
 * only while the client has received nothing: a stream is read up to its
 * first meaningful event (not `ping`) before it is committed. After commit a
 * failure ends the stream with an Anthropic-shaped `event: error` — never a
 * second `message_start`.
 *
 * An account without room (admission.ts) is passed over for the next one — except a bound session's
 * single request, which first waits up to `session-affinity-blip-wait-ms` for room on its account;
 * when no account had room the request waits in the waiting room for it and tries again.
 *
 * Every lease is acquired and released here, in one `finally` per attempt; a complete answer
 * reconciles its lease (costLease.ts, docs/cost-leases.md) before that release.
 */
import type { AttemptRecord, DecisionOutcome } from '../../routing/decision';
import type { PlanAccount } from '../../routing/plan';
import type { HeldAnswer } from '../relay/clientAnswer';
import { ClientLink } from '../upstream/call';
import { admitted, hasRoom, released, settle, throttledCap, waitForBoundRoom, waitForRoom } from './admission';
import { costReservation } from './costLease';
import type { AttemptOutcome, RequestContext } from './context';
import { usableNow } from './eligibility';
import { retrySameAccount } from './sameAccountRetry';
import { blipBelowSoftLimit, holdForAccount, replan, transientWait, waitForBoundAccount, type AfterWait } from './transientWait';
import { endProbe, isProbeAttempt } from './probe';
import { tryAccount, type AttemptStep } from './tryAccount';

/** Server errors retried on other accounts before the last one is returned. */
const MAX_SERVER_ERROR_ROTATIONS = 2;
/** Attempt results that are upstream trouble rather than the account's: limited rotations. */
const TRANSIENT_RESULTS = new Set(['server_error', 'network_error', 'stream_failed', 'empty_stream', 'invalid_json', 'body_failed', 'body_too_large', 'stream_server_error']);
/** Accounts a `count_tokens` or `models` request tries at most (it cools none down, so it could walk the whole pool). */
const MAX_ACCOUNTS_OUTSIDE_MESSAGES = 2;
/**
 * Concurrency throttles one request takes before such an answer counts as a failed attempt. Each
 * throttle waits for room first, and a throttled request goes back only with fewer in flight
 * (admission.ts `throttledCap`), so this only bounds a pathological upstream.
 */
const MAX_CONCURRENCY_THROTTLES = 8;

/**
 * Step 6: tries the planned accounts and relays the first good answer as it commits (binding
 * the session then); sets `ctx.outcome` to what happened. It waits where a wait keeps a request
 * on its account or spares it an error: for a bound account that only blips, for a short throttle
 * (sameAccountRetry.ts), and while every account only pauses (transientWait.ts). A held upstream
 * error and "no usable account" are left for the relay step to answer.
 */
export async function attempt(ctx: RequestContext): Promise<void> {
  const { res, services: s } = ctx;
  const client = (ctx.client = new ClientLink());
  const onClose = () => {
    if (!res.writableFinished) client.markGone();
  };
  res.on('close', onClose);
  // A client that left while an earlier step waited (the shared pool's binding look-up) closed before this listener.
  if (res.closed) onClose();
  // A `/v1/messages` call holds a lease while it runs, and its answers set the account's state
  // (cooldowns, needs-sign-in, a token refresh on 401). `count_tokens` and `models` do neither —
  // Anthropic limits token counting apart from Messages, and an endpoint's 403 or 429 says
  // nothing about serving messages — and try at most two accounts; the quota headers of their
  // answers are still recorded (they describe the account's windows).
  const forMessages = ctx.route === 'messages';
  const attempts: AttemptRecord[] = [];
  const attempted = new Set<string>();
  const retries = { count: 0 };
  let outcome: AttemptOutcome | undefined;
  let held: HeldAnswer | undefined;
  let requestScopedRotated = false;
  let serverErrorRotations = 0;
  // The first usable account of a pass that had no room (admission.ts): the request waits for room there.
  let full: PlanAccount | undefined;
  // An account below the session soft limit that only blips: a session's request waits for it (once) rather than go past the soft limit.
  let paused: { account: PlanAccount; untilMs: number } | undefined;
  let pauseWaited = false;
  let waitSinceMs = 0;
  let waitRefused = false;
  let concurrencyThrottles = 0;
  // When this request's wait for room on its session's bound account ends, epoch ms (0: it has not waited).
  let boundRoomUntilMs = 0;
  try {
    // One round per plan or pass: a transient wait (transientWait.ts) holds the request and plans it
    // again; when no usable account had room, the request waits for room (admission.ts) and goes round again.
    let roomWaited = false;
    rounds: for (;;) {
      full = undefined;
      paused = undefined;
      const order = ctx.plan.order;
      for (let i = 0; i < order.length; i++) {
        const account = order[i];
        if (client.gone) {
          outcome = unserved('client_abort', 499, attempts);
          break rounds;
        }
        // After a wait for room, an account this request already tried is not tried again in that pass.
        if (roomWaited && attempted.has(account.id)) continue;
        const probing = isProbeAttempt(ctx, account.id);
        if (!probing && !usableNow(ctx, account.id)) {
          const next = await waitForBoundAccount(ctx, account);
          if (next === 'replan') {
            replan(ctx);
            roomWaited = false;
            continue rounds;
          }
          if (next === 'go_on') continue;
        }
        if (forMessages && !hasRoom(ctx, account)) {
          // A bound session's single request waits briefly for room on its account, then looks at it again (it may have paused meanwhile); its parallel requests spill.
          if (singleOfBoundSession(ctx, account) && (await waitForBoundRoom(ctx, account, (boundRoomUntilMs ||= s.now() + ctx.generation.config.policy.sessionAffinityBlipWaitMs))))
            i--;
          else full ??= account;
          continue;
        }
        // A subscription account only short of room is waited for before a pay-as-you-go account serves.
        if (account.fallback && full && !waitRefused) break;
        // A session's request goes past the soft limit (where it would have to move again) only when no account below it just lacks room or blips.
        if (pastSoftLimit(ctx, account)) {
          if (full && !waitRefused && !full.metrics.sessionSaturated) break;
          if (!full && !pauseWaited && (paused = blipBelowSoftLimit(ctx, order))) break;
        }
        if (!forMessages && attempted.size >= MAX_ACCOUNTS_OUTSIDE_MESSAGES) break rounds;
        attempted.add(account.id);
        let step: AttemptStep;
        let after: AfterWait = 'go_on';
        let throttled = false;
        // The same-account retry rule is asked only after a failed attempt: a served request pays no promise for it.
        do {
          const lease = forMessages && !account.fallback ? s.state.leases.acquire(account.id, ctx.info.sticky.keyHash, costReservation(ctx, account)) : undefined;
          const sent = lease ? admitted(ctx, account) : 0;
          try {
            step = await tryAccount(ctx, account, attempts, attempted);
            // Only a complete answer's usage is its real size: a cut one would teach the estimate too little.
            if (lease && step.next === 'served' && step.outcome === 'success' && step.usage) lease.reconcile(step.usage);
          } finally {
            if (lease) {
              lease.release();
              released(ctx);
            }
          }
          throttled = lease !== undefined && settle(ctx, account, step.next === 'rotate', attempts, sent);
          if (throttled) (ctx.throttledOn ??= new Map<string, number>()).set(account.id, throttledCap(ctx, account, sent));
        } while (!throttled && forMessages && step.next === 'rotate' && (after = await retrySameAccount(ctx, account, step, attempts, retries)) === 'try');
        if (probing) endProbe(ctx, step);
        if (throttled && step.next === 'rotate' && ++concurrencyThrottles <= MAX_CONCURRENCY_THROTTLES) {
          // Too many at once on this account, not its failure: the session keeps it, and the request may come back to it.
          attempted.delete(account.id);
          held = step.held ?? held;
          // A bound session's single request tries its account again, waiting for room there first (the check above).
          if (singleOfBoundSession(ctx, account) && (boundRoomUntilMs === 0 || s.now() < boundRoomUntilMs)) i--;
          else full ??= account;
          continue;
        }
        if (step.next === 'served') {
          outcome = { outcome: step.outcome, cappedOut: false, status: step.status, servedBy: account, attempts, usage: step.usage, streamed: step.streamed, held: undefined };
          break rounds;
        }
        if (step.next === 'abort') {
          outcome = unserved('client_abort', 499, attempts);
          break rounds;
        }
        if (step.next === 'return') {
          held = step.held;
          break rounds;
        }
        held = step.held ?? held;
        if (after === 'replan') {
          replan(ctx);
          roomWaited = false;
          continue rounds;
        }
        const last = attempts[attempts.length - 1];
        if (last?.result === 'request_scoped') {
          if (requestScopedRotated) break;
          requestScopedRotated = true;
        }
        if (last && TRANSIENT_RESULTS.has(last.result)) {
          if (serverErrorRotations >= MAX_SERVER_ERROR_ROTATIONS) break;
          serverErrorRotations++;
        }
        s.state.countFailover();
        s.log.info(`failover ${ctx.requestId}: ${account.id} → next (${last?.result ?? 'skipped'})`);
      }
      if (full && !waitRefused) {
        const wait = await waitForRoom(ctx, full, attempts, (waitSinceMs ||= s.now()));
        if (wait === 'gone') {
          outcome = unserved('client_abort', 499, attempts);
          break;
        }
        // No wait possible: one last pass, where a fallback account may serve.
        if (wait === 'refused') waitRefused = true;
        roomWaited = true;
        continue;
      }
      if (paused) {
        // Held once for the account below the soft limit that only blips, then planned again (it may be usable by then).
        pauseWaited = true;
        const end = await holdForAccount(ctx, paused.account.id, 'blip', paused.untilMs);
        if (end === 'client_gone') {
          outcome = unserved('client_abort', 499, attempts);
          break;
        }
        if (end !== undefined) replan(ctx);
        roomWaited = false;
        continue;
      }
      if (!(await transientWait(ctx, held, waitRefused && full !== undefined))) break;
      roomWaited = false;
    }
    // An account only lacked room, and the request could not wait for it: the router's own throttle.
    ctx.outcome = outcome ?? nothingServed(ctx, held, waitRefused && full !== undefined, attempts);
  } finally {
    res.off('close', onClose);
    ctx.probe?.end(undefined, s.now()); // never reached: only its slot is freed
    // No call follows: the body's bytes and its share of the memory budget go now.
    ctx.body.release();
  }
}

/** Whether `account` is past the session soft limit for a session's request under affinity (where the session would be bound, or write its cache, only to move again). */
function pastSoftLimit(ctx: RequestContext, account: PlanAccount): boolean {
  return account.metrics.sessionSaturated && !account.fallback && ctx.generation.config.policy.sessionAffinity && ctx.info.sticky.keyHash !== null;
}

/** Whether `account` is the request's session's bound account, placed by affinity, with none of the session's requests in flight on it. */
function singleOfBoundSession(ctx: RequestContext, account: PlanAccount): boolean {
  const affinity = ctx.plan.affinity;
  const key = ctx.info.sticky.keyHash;
  return affinity.applied && affinity.boundAccount === account.id && key !== null && ctx.services.state.leases.sessionInflight(account.id, key) === 0;
}

/**
 * No account served. When a usable account only lacked room and the request could not wait (longer)
 * for it, the answer is the router's own throttle (429, `retry-after`). A 429 when no account is
 * usable any more gets the pool-wide answer (earliest recovery, which window): it helps the client
 * more than the last account's own 429. Any other failure — 5xx, 529, a dead connection, a
 * header-less 429 while accounts remain — is relayed as it came.
 */
function nothingServed(ctx: RequestContext, held: HeldAnswer | undefined, cappedOut: boolean, attempts: AttemptRecord[]): AttemptOutcome {
  if (cappedOut) return unserved('no_usable_account', 429, attempts, undefined, true);
  const poolExhausted = held?.status === 429 && !ctx.plan.order.some((a) => usableNow(ctx, a.id));
  if (held && !poolExhausted && !ctx.res.headersSent) return unserved(held.status >= 500 ? 'upstream_error' : 'client_error', held.status, attempts, held);
  return unserved('no_usable_account', 429, attempts, undefined, cappedOut);
}

/** An outcome with no serving account. */
function unserved(outcome: DecisionOutcome, status: number, attempts: AttemptRecord[], held?: HeldAnswer, cappedOut = false): AttemptOutcome {
  return { outcome, cappedOut, status, servedBy: null, attempts, usage: null, streamed: false, held };
}
