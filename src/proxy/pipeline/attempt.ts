/**
 * The attempt loop: try the planned accounts in order, classify each upstream
 * answer, set cooldowns, and relay the first good response. Failover happens
 * only before the first byte reaches the client: a stream is read up to its
 * first meaningful event (not `ping`) before it is committed. After commit a
 * failure ends the stream with an Anthropic-shaped `event: error` — never a
 * second `message_start`.
 *
 * Every lease is acquired and released here, in one `finally` per attempt.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { AccountInfo, Credentials } from '../../accounts/types';
import { RefreshError } from '../../accounts/oauth';
import type { TokenManager } from '../../accounts/tokenManager';
import { classifyResponse, classifyStreamError } from '../../quota/classify';
import { planCooldown } from '../../quota/cooldown';
import { parseUnifiedHeaders } from '../../quota/headers';
import type { ResponseClass } from '../../quota/types';
import type { AttemptRecord, DecisionOutcome, UsageRecord } from '../../routing/decision';
import type { PlanAccount } from '../../routing/plan';
import type { RoutingPolicy } from '../../routing/policy';
import { anthropicErrorBody } from '../relay/anthropicError';
import { usageFromJson } from '../relay/answerUsage';
import { MAX_BODY_BYTES, type RequestBody } from '../http/body';
import { StreamRelay, type StreamEnd, type StreamRelayHooks } from '../relay/streamRelay';
import { clientHeaderList, upstreamHeaders } from '../upstream/agent';
import type { ClientHead } from '../http/clientHead';
import { callUpstream, type ClientLink, type UpstreamHead } from '../upstream/call';
import type { RouterState } from '../state/routerState';
import type { Logger } from '../log';

/** Header naming the account that served a response (a label, never a token). */
export const ACCOUNT_HEADER = 'x-claude-router-account';
/** Header carrying the router's id of the request (the decision record's `requestId`). */
export const REQUEST_ID_HEADER = 'x-claude-router-request-id';

/** Server errors retried on other accounts before the last one is returned. */
const MAX_SERVER_ERROR_ROTATIONS = 2;
/** Attempt results that are upstream trouble rather than the account's: limited rotations. */
const TRANSIENT_RESULTS = new Set(['server_error', 'network_error', 'stream_failed', 'empty_stream', 'invalid_json', 'body_failed', 'body_too_large', 'stream_server_error']);
/** Accounts a `count_tokens` or `models` request tries at most (it cools none down, so it could walk the whole pool). */
const MAX_ACCOUNTS_OUTSIDE_MESSAGES = 2;
/** Error bodies larger than this are not read whole (they are not Anthropic errors). */
const MAX_ERROR_BODY = 1 << 20;
/** Successful non-stream answers are buffered whole (failover on a broken one); none is anywhere near this. */
const MAX_ANSWER_BODY = MAX_BODY_BYTES;

/** Everything one request's attempts share. */
export interface AttemptRequest {
  req: IncomingMessage;
  /** The client's request head (the forwarded headers, the betas). */
  head: ClientHead;
  res: ServerResponse;
  body: RequestBody;
  /** Path with query string, as received. */
  pathWithQuery: string;
  model: string | null;
  order: readonly PlanAccount[];
  accounts: ReadonlyMap<string, AccountInfo>;
  policy: RoutingPolicy;
  /**
   * A `/v1/messages` call: it holds a lease while it runs, and its answers set the account's
   * state (cooldowns, needs-sign-in, a token refresh on 401). `count_tokens` and `models` do
   * neither — Anthropic limits token counting apart from Messages, and an endpoint's 403 or 429
   * says nothing about serving messages — and they try at most two accounts; the quota
   * headers of their answers are still recorded (they describe the account's windows).
   */
  forMessages: boolean;
  requestId: string;
  /** Called once when a response is committed to the client, with the serving account. */
  onCommit: (account: PlanAccount, attempted: ReadonlySet<string>) => void;
  /** Whether the client is still there; its going away aborts the running upstream call. */
  client: ClientLink;
}

/** Services the loop uses. */
export interface AttemptServices {
  state: RouterState;
  tokens: TokenManager;
  dispatcher: Dispatcher;
  upstreamOrigin: string;
  log: Logger;
  now: () => number;
  /** Re-evaluates whether an account is usable now for a request of `model` (earlier attempts may have changed it). */
  usableNow: (account: string, model: string | null) => boolean;
  /** Whether the account is still configured (a reload may remove it mid-request; its state must not come back). */
  known: (account: string) => boolean;
}

/** What the loop did. */
export interface AttemptOutcome {
  /** `exhausted`: nothing was written; the caller answers "no usable account". */
  outcome: DecisionOutcome | 'exhausted';
  /** Some usable account was skipped only because it was at `max-inflight-per-account`. */
  cappedOut?: boolean;
  /** The answer was a server-sent-event stream. */
  streamed: boolean;
  status: number;
  servedBy: PlanAccount | null;
  attempts: AttemptRecord[];
  usage: UsageRecord | null;
}

/** A failed upstream answer the client may still receive (when nothing better is left). */
interface HeldResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  account: string;
}

type Step =
  | { next: 'served'; status: number; outcome: DecisionOutcome; usage: UsageRecord | null; streamed: boolean }
  | { next: 'rotate'; held?: HeldResponse }
  | { next: 'return'; held: HeldResponse }
  | { next: 'abort' };

/** Runs the attempt loop and writes the client's response (except the "no usable account" answer). */
export async function runAttempts(r: AttemptRequest, s: AttemptServices): Promise<AttemptOutcome> {
  const attempts: AttemptRecord[] = [];
  const attempted = new Set<string>();
  let held: HeldResponse | undefined;
  let requestScopedRotated = false;
  let serverErrorRotations = 0;
  let cappedOut = false;

  for (const account of r.order) {
    if (r.client.gone) return { outcome: 'client_abort', status: 499, servedBy: null, attempts, usage: null, streamed: false };
    if (!s.usableNow(account.id, r.model)) continue;
    const cap = r.policy.maxInflightPerAccount;
    if (r.forMessages && cap > 0 && !account.fallback && s.state.leases.inflight(account.id) >= cap) {
      cappedOut = true;
      continue;
    }
    if (!r.forMessages && attempted.size >= MAX_ACCOUNTS_OUTSIDE_MESSAGES) break;
    attempted.add(account.id);
    const lease = r.forMessages && !account.fallback ? s.state.leases.acquire(account.id) : undefined;
    let step: Step;
    try {
      step = await attemptOne(r, s, account, attempts, attempted);
    } finally {
      lease?.release();
    }
    if (step.next === 'served') return { outcome: step.outcome, status: step.status, servedBy: account, attempts, usage: step.usage, streamed: step.streamed };
    if (step.next === 'abort') return { outcome: 'client_abort', status: 499, servedBy: null, attempts, usage: null, streamed: false };
    if (step.next === 'return') {
      held = step.held;
      break;
    }
    held = step.held ?? held;
    const last = attempts[attempts.length - 1];
    if (last?.result === 'request_scoped') {
      if (requestScopedRotated) {
        break;
      }
      requestScopedRotated = true;
    }
    if (last && TRANSIENT_RESULTS.has(last.result)) {
      if (serverErrorRotations >= MAX_SERVER_ERROR_ROTATIONS) break;
      serverErrorRotations++;
    }
    s.state.counters.failovers++;
    s.log.info(`failover ${r.requestId}: ${account.id} → next (${last?.result ?? 'skipped'})`);
  }

  // A 429 when no account is usable any more: the pool-wide answer (earliest recovery, which
  // window) helps the client more than the last account's own 429. Any other failure — 5xx,
  // 529, a dead connection, a header-less 429 while accounts remain — is relayed as it came.
  const poolExhausted = held?.status === 429 && !r.order.some((a) => s.usableNow(a.id, r.model));
  if (held && !poolExhausted && !r.res.headersSent) {
    relayHeld(r, held);
    return { outcome: held.status >= 500 ? 'upstream_error' : 'client_error', status: held.status, servedBy: null, attempts, usage: null, streamed: false };
  }
  return { outcome: 'exhausted', cappedOut, status: 429, servedBy: null, attempts, usage: null, streamed: false };
}

function relayHeld(r: AttemptRequest, held: HeldResponse): void {
  r.res.writeHead(
    held.status,
    clientHeaderList(held.headers, [ACCOUNT_HEADER, held.account, REQUEST_ID_HEADER, r.requestId, 'content-length', String(held.body.length)]),
  );
  r.res.end(held.body);
}

async function attemptOne(
  r: AttemptRequest,
  s: AttemptServices,
  account: PlanAccount,
  attempts: AttemptRecord[],
  attempted: Set<string>,
): Promise<Step> {
  const info = r.accounts.get(account.id);
  if (!info) return { next: 'rotate' };
  let creds: Credentials;
  try {
    creds = s.tokens.ready(account.id) ?? (await s.tokens.current(account.id));
  } catch (err) {
    return signInFailure(s, account.id, err, attempts);
  }
  const method = r.req.method as Dispatcher.HttpMethod;
  let refreshed = false;
  let reconnected = false;
  for (;;) {
    const t0 = s.now();
    // Per call: a chunk list is read once.
    const body = method === 'GET' || method === 'HEAD' ? undefined : r.body.forUpstream();
    const headers = upstreamHeaders(r.head, info.kind, creds.accessToken);
    // A chunk list has no length undici can see; without one it would send the body chunked.
    if (body !== undefined && !Buffer.isBuffer(body)) headers.push('content-length', String(r.body.length));
    let ms = 0;
    let status = 0;
    const call = await callUpstream<StreamEnd>(
      s.dispatcher,
      // undici takes an Iterable body (docs/api/Dispatcher.md, dispatch options); its types lag behind.
      { origin: s.upstreamOrigin, path: r.pathWithQuery, method, headers, body: body as Dispatcher.DispatchOptions['body'] },
      r.client,
      (head, controller, settle) => {
        ms = s.now() - t0;
        status = head.status;
        const snapshot = parseUnifiedHeaders(head.headers, s.now());
        if (snapshot && s.known(account.id)) s.state.recordEvidence(account.id, snapshot, t0);
        if (status >= 200 && status < 300 && isEventStream(head.headers)) {
          return { stream: new StreamRelay(r.res, r.client, controller, streamHooks(r, s, account, head, attempts, () => ms, attempted), settle) };
        }
        // Successful answers are relayed whole; error bodies are only read to classify them.
        return { buffer: status >= 200 && status < 300 ? MAX_ANSWER_BODY : MAX_ERROR_BODY };
      },
    );

    if (call.kind === 'failed') {
      if (r.client.gone) {
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
      return { next: 'rotate', held: syntheticHeld(account.id, 502, 'api_error', 'Claude Router could not reach the Anthropic API.') };
    }
    if (call.kind === 'streamed') {
      const end = call.value;
      if (end.kind === 'served') return { next: 'served', status, outcome: end.outcome, usage: end.usage, streamed: true };
      if (end.kind === 'client_gone') return { next: 'abort' };
      return { next: 'rotate', held: syntheticHeld(account.id, end.status, end.type, end.message) };
    }
    if (status >= 200 && status < 300) return relayJson(r, s, account, call, attempts, ms, attempted);

    // An error answer (a broken error body is still an error answer).
    const now = s.now();
    const { head } = call;
    const cls = classifyResponse({ status, headers: head.headers, body: call.body.toString('utf8'), nowMs: now, model: r.model ?? undefined });
    attempts.push({ account: account.id, status, result: cls.kind, ms });
    const held: HeldResponse = call.truncated
      ? // Cut at the read limit, it is no Anthropic error any more: its status and headers, our body.
        { status, headers: { ...head.headers, 'content-type': 'application/json' }, body: errorBody('api_error', `Claude Router: the upstream's ${status} answer was over ${MAX_ERROR_BODY} bytes and was not relayed.`), account: account.id }
      : { status, headers: head.headers, body: call.body, account: account.id };

    if (!r.forMessages) return { next: cls.kind === 'client_error' ? 'return' : 'rotate', held };
    if (cls.kind === 'unauthorized' && info.kind === 'oauth' && !refreshed) {
      try {
        creds = await s.tokens.refresh(account.id, creds.accessToken);
        refreshed = true;
        s.state.clearNeedsSignIn(account.id);
        continue;
      } catch (err) {
        signInFailure(s, account.id, err, []);
        return { next: 'rotate', held };
      }
    }
    if (cls.kind === 'unauthorized') {
      if (s.known(account.id)) s.state.markNeedsSignIn(account.id, 'upstream rejected the credentials (401)');
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
  const code = (err as NodeJS.ErrnoException).code ?? ((err as Error & { cause?: NodeJS.ErrnoException }).cause?.code);
  return code !== undefined && CONNECTION_LOST.has(code);
}

function isEventStream(headers: IncomingHttpHeaders): boolean {
  return String(headers['content-type'] ?? '').includes('text/event-stream');
}

/** What the event-stream relay of one attempt does at its milestones. */
function streamHooks(
  r: AttemptRequest,
  s: AttemptServices,
  account: PlanAccount,
  head: UpstreamHead,
  attempts: AttemptRecord[],
  ms: () => number,
  attempted: Set<string>,
): StreamRelayHooks {
  return {
    commit: () => {
      r.onCommit(account, attempted);
      r.body.release();
      // No flush: the head goes out with the first events, in one write.
      r.res.writeHead(head.status, clientHeaderList(head.headers, [ACCOUNT_HEADER, account.id, REQUEST_ID_HEADER, r.requestId]));
    },
    record: (result) => attempts.push({ account: account.id, status: head.status, result, ms: ms() }),
    errorBeforeContent: (type) => {
      const cls = classifyStreamError(type, s.now());
      if (r.forMessages) applyCooldown(s, account.id, cls, s.now());
      return `stream_${cls.kind}`;
    },
    warn: (message) => s.log.warn(`upstream ${account.id}: ${message}`),
  };
}

function signInFailure(s: AttemptServices, label: string, err: unknown, attempts: AttemptRecord[]): Step {
  const failure = err instanceof RefreshError ? err.failure : 'network';
  if (!s.known(label)) {
    // Removed while this request ran: record nothing about it.
  } else if (failure === 'network') {
    s.state.setCooldown(label, { untilMs: s.now() + 30_000, reason: 'server_error', setAtMs: s.now() });
  } else {
    s.state.markNeedsSignIn(label, failure === 'invalid_grant' ? 'refresh token was rejected (invalid_grant)' : 'no usable credentials');
  }
  s.log.warn(`account ${label}: token refresh failed (${failure})`);
  attempts.push({ account: label, status: 0, result: `refresh_${failure}`, ms: 0 });
  return { next: 'rotate' };
}

function applyCooldown(s: AttemptServices, label: string, cls: ResponseClass, now: number): void {
  const cooldown = planCooldown(cls, now);
  if (!cooldown || !s.known(label)) return;
  s.state.setCooldown(label, cooldown);
  s.log.info(`cooldown ${label}: ${cooldown.reason} until ${new Date(cooldown.untilMs).toISOString()}`);
}

function relayJson(
  r: AttemptRequest,
  s: AttemptServices,
  account: PlanAccount,
  call: { head: UpstreamHead; body: Buffer; error?: Error; truncated: boolean },
  attempts: AttemptRecord[],
  ms: number,
  attempted: Set<string>,
): Step {
  const { status, headers } = call.head;
  const record = (result: string) => attempts.push({ account: account.id, status, result, ms });
  if (r.client.gone) {
    record('client_abort');
    return { next: 'abort' };
  }
  if (call.truncated) {
    record('body_too_large');
    s.log.warn(`upstream ${account.id}: a ${status} answer over ${MAX_ANSWER_BODY} bytes`);
    return { next: 'rotate', held: syntheticHeld(account.id, 502, 'api_error', 'Claude Router: the upstream answer was too large to relay.') };
  }
  if (call.error) {
    record('body_failed');
    s.log.warn(`upstream ${account.id}: body failed (${call.error.message})`);
    return { next: 'rotate', held: syntheticHeld(account.id, 502, 'api_error', 'Claude Router: the upstream answer broke off.') };
  }
  const usage = usageFromJson(call.body);
  if (usage === undefined && String(headers['content-type'] ?? '').includes('json')) {
    // A 200 whose JSON does not parse is a broken answer, not a success: try another account.
    record('invalid_json');
    s.log.warn(`upstream ${account.id}: 200 with an unreadable JSON body`);
    return { next: 'rotate', held: syntheticHeld(account.id, 502, 'api_error', 'Claude Router: upstream answered 200 with an unreadable body.') };
  }
  r.onCommit(account, attempted);
  record('success');
  r.res.writeHead(status, clientHeaderList(headers, [ACCOUNT_HEADER, account.id, REQUEST_ID_HEADER, r.requestId, 'content-length', String(call.body.length)]));
  r.res.end(call.body);
  return { next: 'served', status, outcome: 'success', usage: usage ?? null, streamed: false };
}

/** A response the router makes up for a failure that has no HTTP answer of its own (a stream error, a dead connection). */
function syntheticHeld(account: string, status: number, type: string, message: string): HeldResponse {
  return { status, headers: { 'content-type': 'application/json' }, body: errorBody(type, message), account };
}

function errorBody(type: string, message: string): Buffer {
  return Buffer.from(anthropicErrorBody(type, message));
}
