/**
 * The attempt loop (step 6): try the planned accounts in order (tryAccount.ts
 * makes each call, classifies its answer, sets cooldowns and commits a good
 * answer to the client) within the rotation limits. Failover happens
 * only before the first byte reaches the client: a stream is read up to its
 * first meaningful event (not `ping`) before it is committed. After commit a
 * failure ends the stream with an Anthropic-shaped `event: error` — never a
 * second `message_start`.
 *
 * Every lease is acquired and released here, in one `finally` per attempt.
 */
import type { AttemptRecord, DecisionOutcome } from '../../routing/decision';
import type { HeldAnswer } from '../relay/clientAnswer';
import { ClientLink } from '../upstream/call';
import type { AttemptOutcome, RequestContext } from './context';
import { atInflightCap, usableNow } from './eligibility';
import { retrySameAccount } from './sameAccountRetry';
import { replan, transientWait, waitForBoundAccount, type AfterWait } from './transientWait';
import { endProbe, isProbeAttempt } from './probe';
import { tryAccount, type AttemptStep } from './tryAccount';

/** Server errors retried on other accounts before the last one is returned. */
const MAX_SERVER_ERROR_ROTATIONS = 2;
/** Attempt results that are upstream trouble rather than the account's: limited rotations. */
const TRANSIENT_RESULTS = new Set(['server_error', 'network_error', 'stream_failed', 'empty_stream', 'invalid_json', 'body_failed', 'body_too_large', 'stream_server_error']);
/** Accounts a `count_tokens` or `models` request tries at most (it cools none down, so it could walk the whole pool). */
const MAX_ACCOUNTS_OUTSIDE_MESSAGES = 2;

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
  let cappedOut = false;
  try {
    // One round per plan: a transient wait (transientWait.ts) holds the request and plans it again.
    rounds: for (;;) {
      for (const account of ctx.plan.order) {
        if (client.gone) {
          outcome = unserved('client_abort', 499, attempts);
          break rounds;
        }
        const probing = isProbeAttempt(ctx, account.id);
        if (!probing && !usableNow(ctx, account.id)) {
          const next = await waitForBoundAccount(ctx, account);
          if (next === 'replan') {
            replan(ctx);
            continue rounds;
          }
          if (next === 'go_on') continue;
        }
        if (atInflightCap(ctx, account)) {
          cappedOut = true;
          continue;
        }
        if (!forMessages && attempted.size >= MAX_ACCOUNTS_OUTSIDE_MESSAGES) break;
        attempted.add(account.id);
        let step: AttemptStep;
        let after: AfterWait = 'go_on';
        // The same-account retry rule is asked only after a failed attempt: a served request pays no promise for it.
        do {
          const lease = forMessages && !account.fallback ? s.state.leases.acquire(account.id) : undefined;
          try {
            step = await tryAccount(ctx, account, attempts, attempted);
          } finally {
            lease?.release();
          }
        } while (forMessages && step.next === 'rotate' && (after = await retrySameAccount(ctx, account, step, attempts, retries)) === 'try');
        if (probing) endProbe(ctx, step);
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
      if (!(await transientWait(ctx, held, cappedOut))) break;
    }
    ctx.outcome = outcome ?? nothingServed(ctx, held, cappedOut, attempts);
  } finally {
    res.off('close', onClose);
    ctx.probe?.end(undefined, s.now()); // never reached: only its slot is freed
    // No call follows: the body's bytes and its share of the memory budget go now.
    ctx.body.release();
  }
}

/**
 * No account served. A 429 when no account is usable any more gets the pool-wide answer
 * (earliest recovery, which window): it helps the client more than the last account's own 429.
 * Any other failure — 5xx, 529, a dead connection, a header-less 429 while accounts remain — is
 * relayed as it came.
 */
function nothingServed(ctx: RequestContext, held: HeldAnswer | undefined, cappedOut: boolean, attempts: AttemptRecord[]): AttemptOutcome {
  const poolExhausted = held?.status === 429 && !ctx.plan.order.some((a) => usableNow(ctx, a.id));
  if (held && !poolExhausted && !ctx.res.headersSent) return unserved(held.status >= 500 ? 'upstream_error' : 'client_error', held.status, attempts, held);
  return unserved('no_usable_account', 429, attempts, undefined, cappedOut);
}

/** An outcome with no serving account. */
function unserved(outcome: DecisionOutcome, status: number, attempts: AttemptRecord[], held?: HeldAnswer, cappedOut = false): AttemptOutcome {
  return { outcome, cappedOut, status, servedBy: null, attempts, usage: null, streamed: false, held };
}
