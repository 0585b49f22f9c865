/**
 * One attempt of the attempt loop: one account's call, from its credentials to
 * its answer — relayed to the client when it is good (a stream only once its
 * first meaningful event is in), otherwise classified and left to the loop as
 * a held error, with the account's cooldown or needs-sign-in set.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { Credentials } from '../../accounts/types';
import { RefreshError } from '../../accounts/oauth';
import { invalidGrantReason } from '../../accounts/grant';
import { classifyResponse, classifyStreamError } from '../../quota/classify';
import { planCooldown } from '../../quota/cooldown';
import type { ResponseClass } from '../../quota/types';
import type { AttemptRecord, DecisionOutcome, UsageRecord } from '../../routing/decision';
import type { PlanAccount } from '../../routing/plan';
import { MAX_BODY_BYTES } from '../http/body';
import { usageFromJson } from '../relay/answerUsage';
import { commitStreamHead, sendUpstreamAnswer, syntheticAnswer, type HeldAnswer } from '../relay/clientAnswer';
import { redactTokens } from '../relay/redact';
import { StreamRelay, type StreamEnd, type StreamRelayHooks } from '../relay/streamRelay';
import { upstreamHeaders } from '../upstream/agent';
import { callUpstream, type UpstreamHead } from '../upstream/call';
import { committed } from './admission';
import { bindOnCommit } from './bind';
import type { RequestContext, RouterServices } from './context';
import { isConfigured } from './eligibility';

/**
 * Token refreshes one attempt may make after 401s. A fresh pair can be overtaken while in use —
 * another request's or router's refresh, an early expiry — so a refused pair is refreshed again a
 * few times before the account is taken for signed out.
 */
const MAX_REFRESHES_PER_ATTEMPT = 3;

/** Error bodies larger than this are not read whole (they are not Anthropic errors). */
const MAX_ERROR_BODY = 1 << 20;
/** Successful non-stream answers are buffered whole (failover on a broken one); none is anywhere near this. */
const MAX_ANSWER_BODY = MAX_BODY_BYTES;

/** How one account's attempt ended: served, rotate to the next account (maybe holding its error), return its error, or abort. */
export type AttemptStep =
  | { next: 'served'; status: number; outcome: DecisionOutcome; usage: UsageRecord | null; streamed: boolean }
  | { next: 'rotate'; held?: HeldAnswer }
  | { next: 'return'; held: HeldAnswer }
  | { next: 'abort' };

/**
 * Tries one account: its credentials (refreshed on a 401, at most {@link MAX_REFRESHES_PER_ATTEMPT}
 * times), the upstream call (once more on
 * a fresh connection when a kept-alive one broke), the answer classified, the account's state
 * set (evidence, cooldown, needs-sign-in), and a good answer committed to the client. Every
 * upstream body it relays or holds has the tokens of this attempt — the pair it started with and
 * the pair a refresh gave it — redacted (relay/redact.ts).
 * @param attempts this request's attempt records, appended to
 * @param attempted labels of the accounts this request tried (for session binding at commit)
 */
export async function tryAccount(ctx: RequestContext, account: PlanAccount, attempts: AttemptRecord[], attempted: ReadonlySet<string>): Promise<AttemptStep> {
  const s = ctx.services;
  const info = ctx.generation.accountsByLabel.get(account.id);
  if (!info) return { next: 'rotate' };
  let creds: Credentials;
  try {
    creds = s.tokens.ready(account.id) ?? (await s.tokens.current(account.id));
  } catch (err) {
    return signInFailure(s, account.id, err, attempts);
  }
  const method = ctx.req.method as Dispatcher.HttpMethod;
  // The tokens this attempt sent or received: redacted from every upstream body it passes on.
  const tokens = [creds.accessToken, creds.refreshToken];
  let refreshes = 0;
  let reconnected = false;
  for (;;) {
    const t0 = s.now();
    // Per call: a chunk list is read once.
    const body = method === 'GET' || method === 'HEAD' ? undefined : ctx.body.forUpstream();
    const headers = upstreamHeaders(ctx.head, info.kind, creds.accessToken);
    // A chunk list has no length undici can see; without one it would send the body chunked.
    if (body !== undefined && !Buffer.isBuffer(body)) headers.push('content-length', String(ctx.body.length));
    let ms = 0;
    let status = 0;
    const call = await callUpstream<StreamEnd>(
      s.dispatcher,
      // undici takes an Iterable body (its own documentation: https://undici.nodejs.org/#/docs/api/Dispatcher.md, "dispatch" options); its types lag behind.
      { origin: ctx.generation.config.upstreamBaseUrl, path: ctx.url, method, headers, body: body as Dispatcher.DispatchOptions['body'] },
      ctx.client,
      (head, controller, settle) => {
        ms = s.now() - t0;
        status = head.status;
        const snapshot = isConfigured(s, account.id) ? s.state.headerReader.read(account.id, head.headers, s.now()) : undefined;
        if (snapshot) {
          s.state.recordEvidence(account.id, snapshot, t0);
          s.headerNotes.check(account.id, head.headers, t0);
        }
        if (status >= 200 && status < 300 && isEventStream(head.headers)) {
          return {
            stream: new StreamRelay(ctx.res, ctx.client, controller, streamHooks(ctx, account, head, attempts, { ms: () => ms, attempted, tokens }), settle, s.streams),
          };
        }
        // Successful answers are relayed whole; error bodies are only read to classify them.
        return { buffer: status >= 200 && status < 300 ? MAX_ANSWER_BODY : MAX_ERROR_BODY };
      },
    );

    if (call.kind === 'failed') {
      if (ctx.client.gone) {
        // The upstream may have the request (and charge it): the attempt stays on record.
        attempts.push({ account: account.id, status: 0, result: 'client_abort', ms: s.now() - t0 });
        return { next: 'abort' };
      }
      attempts.push({ account: account.id, status: 0, result: 'network_error', ms: s.now() - t0 });
      s.log.warn(`upstream ${account.id}: ${call.error.message}`);
      if (!reconnected && connectionLost(call.error)) {
        // Most often a keep-alive connection the upstream had just closed. Moving to another
        // account would rebind the session and lose its prompt cache; a fresh connection to
        // this one serves it.
        reconnected = true;
        continue;
      }
      return { next: 'rotate', held: syntheticAnswer(account.id, 502, 'api_error', 'Claude Router could not reach the Anthropic API.') };
    }
    if (call.kind === 'streamed') {
      const end = call.value;
      if (end.kind === 'served') return { next: 'served', status, outcome: end.outcome, usage: end.usage, streamed: true };
      if (end.kind === 'client_gone') return { next: 'abort' };
      // The type comes from the upstream's error event.
      const held = syntheticAnswer(account.id, end.status, end.type, end.message);
      held.body = redactTokens(held.body, tokens);
      return { next: 'rotate', held };
    }
    if (status >= 200 && status < 300) return relayJson(ctx, account, call, attempts, ms, attempted, tokens);

    // An error answer (a broken error body is still an error answer).
    const now = s.now();
    const { head } = call;
    const cls = classifyResponse({ status, headers: head.headers, body: call.body.toString('utf8'), nowMs: now, model: ctx.info.model ?? undefined });
    attempts.push({ account: account.id, status, result: cls.kind, ms });
    const held: HeldAnswer = call.truncated
      ? // Cut at the read limit, it is no Anthropic error any more: its status and headers, our body.
        syntheticAnswer(account.id, status, 'api_error', `Claude Router: the upstream's ${status} answer was over ${MAX_ERROR_BODY} bytes and was not relayed.`, {
          ...head.headers,
          'content-type': 'application/json',
        })
      : { status, headers: head.headers, body: redactTokens(call.body, tokens), account: account.id };

    if (ctx.route !== 'messages') return { next: cls.kind === 'client_error' ? 'return' : 'rotate', held };
    if (cls.kind === 'unauthorized' && info.kind === 'oauth' && refreshes < MAX_REFRESHES_PER_ATTEMPT) {
      try {
        creds = await s.tokens.refresh(account.id, creds.accessToken);
        tokens.push(creds.accessToken, creds.refreshToken);
        refreshes++;
        s.state.clearNeedsSignIn(account.id);
        continue;
      } catch (err) {
        signInFailure(s, account.id, err, []);
        return { next: 'rotate', held };
      }
    }
    if (cls.kind === 'unauthorized') {
      // Only the pool's newest pair refused proves a sign-in is needed: a pair overtaken meanwhile says nothing.
      if (isConfigured(s, account.id) && (info.kind !== 'oauth' || s.tokens.holds(account.id, creds.accessToken))) {
        s.state.markNeedsSignIn(account.id, 'upstream rejected the credentials (401)');
        s.log.warn(`account ${account.id}: the upstream refused its credentials (401)${refreshes ? ` after ${refreshes} refreshes` : ''}; it needs sign-in`);
      }
      return { next: 'rotate', held };
    }
    applyCooldown(s, account.id, cls, now);
    if (cls.kind === 'client_error') return { next: 'return', held };
    return { next: 'rotate', held };
  }
}

/**
 * Error codes of a connection that broke before any answer came: a reset, a write into a closed
 * socket, or undici's "other side closed" (`UND_ERR_SOCKET`). Timeouts and refused connections
 * are not among them: a second try would wait as long or fail the same way.
 */
const CONNECTION_LOST = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

function connectionLost(err: Error): boolean {
  const code = (err as NodeJS.ErrnoException).code ?? (err as Error & { cause?: NodeJS.ErrnoException }).cause?.code;
  return code !== undefined && CONNECTION_LOST.has(code);
}

function isEventStream(headers: IncomingHttpHeaders): boolean {
  return String(headers['content-type'] ?? '').includes('text/event-stream');
}

/** What the event-stream relay of one attempt does at its milestones. */
function streamHooks(
  ctx: RequestContext,
  account: PlanAccount,
  head: UpstreamHead,
  attempts: AttemptRecord[],
  { ms, attempted, tokens }: { ms: () => number; attempted: ReadonlySet<string>; tokens: readonly (string | undefined)[] },
): StreamRelayHooks {
  const s = ctx.services;
  return {
    tokens,
    commit: () => {
      bindOnCommit(ctx, account, attempted, attempts);
      committed(ctx);
      ctx.body.release();
      commitStreamHead(ctx.res, head, account.id, ctx.requestId);
    },
    record: (result) => attempts.push({ account: account.id, status: head.status, result, ms: ms() }),
    errorBeforeContent: (type) => {
      const cls = classifyStreamError(type, s.now());
      if (ctx.route === 'messages') applyCooldown(s, account.id, cls, s.now());
      return `stream_${cls.kind}`;
    },
    warn: (message) => s.log.warn(`upstream ${account.id}: ${message}`),
  };
}

/** How long an account whose refresh waits for the shared store is skipped, ms. */
const STORE_WAIT_PAUSE_MS = 5_000;

function signInFailure(s: RouterServices, label: string, err: unknown, attempts: AttemptRecord[]): AttemptStep {
  const failure = err instanceof RefreshError ? err.failure : 'network';
  if (!isConfigured(s, label)) {
    // Removed while this request ran: record nothing about it.
  } else if (failure === 'network' || failure === 'waiting_for_store' || failure === 'store_unreadable') {
    // Waiting for the shared store: a short pause, the account is tried again as soon as its pair may have arrived.
    // This router's own pause (the others may refresh, or hold the new pair): never shared with the pool.
    const pauseMs = failure === 'network' ? 30_000 : STORE_WAIT_PAUSE_MS;
    s.state.setCooldown(label, { untilMs: s.now() + pauseMs, reason: 'server_error', setAtMs: s.now(), local: true });
  } else {
    s.state.markNeedsSignIn(label, failure === 'invalid_grant' ? refusedGrant(s, label) : 'no usable credentials');
  }
  s.log.warn(
    failure === 'store_unreadable'
      ? `account ${label}: its credentials could not be read: ${(err as Error).message}`
      : `account ${label}: token refresh failed${failure === 'invalid_grant' ? `: ${refusedGrant(s, label)}` : ` (${failure})`}`,
  );
  attempts.push({ account: label, status: 0, result: `refresh_${failure}`, ms: 0 });
  return { next: 'rotate' };
}

/**
 * An `invalid_grant` in words: on an old grant, the likely end of its refresh chain (grant.ts). The
 * TokenManager throws it only for the newest refresh token it knows (a race another refresher won
 * is adopted, not thrown), so it is never a superseded token's.
 */
function refusedGrant(s: RouterServices, label: string): string {
  return invalidGrantReason(s.tokens.grantedAt(label), s.now(), s.live.config.policy.grantWarnDays);
}

function applyCooldown(s: RouterServices, label: string, cls: ResponseClass, now: number): void {
  // A model-scoped rejection cools only that family, until its reset.
  if (cls.kind === 'model_scoped_exhausted' && isConfigured(s, label)) s.state.rememberScopedRejection(label, cls, now);
  const cooldown = planCooldown(cls, now);
  if (!cooldown || !isConfigured(s, label)) return;
  s.state.setCooldown(label, cooldown);
  s.log.info(`cooldown ${label}: ${cooldown.reason} until ${new Date(cooldown.untilMs).toISOString()}`);
}

function relayJson(
  ctx: RequestContext,
  account: PlanAccount,
  call: { head: UpstreamHead; body: Buffer; error?: Error; truncated: boolean },
  attempts: AttemptRecord[],
  ms: number,
  attempted: ReadonlySet<string>,
  tokens: readonly (string | undefined)[],
): AttemptStep {
  const s = ctx.services;
  const { status, headers } = call.head;
  const record = (result: string) => attempts.push({ account: account.id, status, result, ms });
  if (ctx.client.gone) {
    record('client_abort');
    return { next: 'abort' };
  }
  if (call.truncated) {
    record('body_too_large');
    s.log.warn(`upstream ${account.id}: a ${status} answer over ${MAX_ANSWER_BODY} bytes`);
    return { next: 'rotate', held: syntheticAnswer(account.id, 502, 'api_error', 'Claude Router: the upstream answer was too large to relay.') };
  }
  if (call.error) {
    record('body_failed');
    s.log.warn(`upstream ${account.id}: body failed (${call.error.message})`);
    return { next: 'rotate', held: syntheticAnswer(account.id, 502, 'api_error', 'Claude Router: the upstream answer broke off.') };
  }
  const usage = usageFromJson(call.body);
  if (usage === undefined && String(headers['content-type'] ?? '').includes('json')) {
    // A 200 whose JSON does not parse is a broken answer, not a success: try another account.
    record('invalid_json');
    s.log.warn(`upstream ${account.id}: 200 with an unreadable JSON body`);
    return { next: 'rotate', held: syntheticAnswer(account.id, 502, 'api_error', 'Claude Router: upstream answered 200 with an unreadable body.') };
  }
  bindOnCommit(ctx, account, attempted, attempts);
  committed(ctx);
  record('success');
  sendUpstreamAnswer(ctx.res, call.head, redactTokens(call.body, tokens), account.id, ctx.requestId);
  return { next: 'served', status, outcome: 'success', usage: usage ?? null, streamed: false };
}
