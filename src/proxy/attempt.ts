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
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { AccountInfo, Credentials } from '../accounts/types';
import { RefreshError } from '../accounts/oauth';
import type { TokenManager } from '../accounts/tokenManager';
import { classifyResponse, classifyStreamError } from '../quota/classify';
import { planCooldown } from '../quota/cooldown';
import { parseUnifiedHeaders } from '../quota/headers';
import type { ResponseClass } from '../quota/types';
import type { AttemptRecord, DecisionOutcome, UsageRecord } from '../routing/decision';
import type { PlanAccount } from '../routing/plan';
import type { RoutingPolicy } from '../routing/policy';
import { scanCompleteEvents, SseFramer, sseErrorFrame } from './sse';
import { clientResponseHeaders, upstreamHeaders } from './upstream';
import type { RouterState } from './routerState';
import type { Logger } from './log';

/** Header naming the account that served a response (a label, never a token). */
export const ACCOUNT_HEADER = 'x-claude-router-account';

/** Server errors retried on other accounts before the last one is returned. */
const MAX_SERVER_ERROR_ROTATIONS = 2;
/** Attempt results that are upstream trouble rather than the account's: limited rotations. */
const TRANSIENT_RESULTS = new Set(['server_error', 'network_error', 'stream_failed', 'empty_stream', 'invalid_json', 'body_failed', 'stream_server_error']);
/** Error bodies larger than this are not read whole (they are not Anthropic errors). */
const MAX_ERROR_BODY = 1 << 20;

/** Everything one request's attempts share. */
export interface AttemptRequest {
  req: IncomingMessage;
  res: ServerResponse;
  body: Buffer;
  /** Path with query string, as received. */
  pathWithQuery: string;
  model: string | null;
  order: readonly PlanAccount[];
  accounts: ReadonlyMap<string, AccountInfo>;
  policy: RoutingPolicy;
  /** Acquire leases (messages) or not (count_tokens, models). */
  countLeases: boolean;
  requestId: string;
  /** Called once when a response is committed to the client, with the serving account. */
  onCommit: (account: PlanAccount, attempted: ReadonlySet<string>) => void;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

/** Services the loop uses. */
export interface AttemptServices {
  state: RouterState;
  tokens: TokenManager;
  dispatcher: Dispatcher;
  upstreamOrigin: string;
  log: Logger;
  now: () => number;
  /** Re-evaluates whether an account is usable now (earlier attempts may have changed it). */
  usableNow: (account: string) => boolean;
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
  headers: Record<string, string | string[]>;
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
    if (r.signal.aborted) return { outcome: 'client_abort', status: 499, servedBy: null, attempts, usage: null, streamed: false };
    if (!s.usableNow(account.id)) continue;
    const cap = r.policy.maxInflightPerAccount;
    if (r.countLeases && cap > 0 && !account.fallback && s.state.leases.inflight(account.id) >= cap) {
      cappedOut = true;
      continue;
    }
    attempted.add(account.id);
    const lease = r.countLeases && !account.fallback ? s.state.leases.acquire(account.id) : undefined;
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
  const poolExhausted = held?.status === 429 && !r.order.some((a) => s.usableNow(a.id));
  if (held && !poolExhausted && !r.res.headersSent) {
    relayHeld(r.res, held);
    return { outcome: held.status >= 500 ? 'upstream_error' : 'client_error', status: held.status, servedBy: null, attempts, usage: null, streamed: false };
  }
  return { outcome: 'exhausted', cappedOut, status: 429, servedBy: null, attempts, usage: null, streamed: false };
}

function relayHeld(res: ServerResponse, held: HeldResponse): void {
  const headers = clientResponseHeaders(held.headers);
  delete headers['content-length'];
  res.writeHead(held.status, { ...headers, [ACCOUNT_HEADER]: held.account, 'content-length': String(held.body.length) });
  res.end(held.body);
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
    creds = await s.tokens.current(account.id);
  } catch (err) {
    return signInFailure(s, account.id, err, attempts);
  }
  let refreshed = false;
  for (;;) {
    const t0 = s.now();
    let up: Dispatcher.ResponseData;
    try {
      up = await s.dispatcher.request({
        origin: s.upstreamOrigin,
        path: r.pathWithQuery,
        method: r.req.method as Dispatcher.HttpMethod,
        headers: upstreamHeaders(r.req.headers, info.kind, creds.accessToken),
        body: r.req.method === 'GET' || r.req.method === 'HEAD' ? undefined : r.body,
        signal: r.signal,
      });
    } catch (err) {
      if (r.signal.aborted) return { next: 'abort' };
      attempts.push({ account: account.id, status: 0, result: 'network_error', ms: s.now() - t0 });
      s.log.warn(`upstream ${account.id}: ${(err as Error).message}`);
      return { next: 'rotate', held: syntheticHeld(account.id, 502, 'api_error', 'Claude Router could not reach the Anthropic API.') };
    }
    const ms = s.now() - t0;
    const now = s.now();
    const snapshot = parseUnifiedHeaders(up.headers, now);
    if (snapshot && s.known(account.id)) s.state.recordEvidence(account.id, snapshot, t0);

    if (up.statusCode >= 200 && up.statusCode < 300) {
      const isSse = String(up.headers['content-type'] ?? '').includes('text/event-stream');
      return isSse ? relayStream(r, s, account, up, attempts, ms, attempted) : relayJson(r, s, account, up, attempts, ms, attempted);
    }

    const body = await readCapped(up.body);
    const cls = classifyResponse({ status: up.statusCode, headers: up.headers, body: body.toString('utf8'), nowMs: now, model: r.model ?? undefined });
    attempts.push({ account: account.id, status: up.statusCode, result: cls.kind, ms });
    const held: HeldResponse = { status: up.statusCode, headers: up.headers as Record<string, string | string[]>, body, account: account.id };

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

async function readCapped(body: Dispatcher.ResponseData['body']): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > MAX_ERROR_BODY) {
        body.destroy();
        break;
      }
      chunks.push(chunk as Buffer);
    }
  } catch {
    /* a broken error body is still an error response */
  }
  return Buffer.concat(chunks);
}

async function relayJson(
  r: AttemptRequest,
  s: AttemptServices,
  account: PlanAccount,
  up: Dispatcher.ResponseData,
  attempts: AttemptRecord[],
  ms: number,
  attempted: Set<string>,
): Promise<Step> {
  const record = (result: string) => attempts.push({ account: account.id, status: up.statusCode, result, ms });
  let body: Buffer;
  try {
    body = Buffer.from(await up.body.arrayBuffer());
  } catch (err) {
    if (r.signal.aborted) return { next: 'abort' };
    record('body_failed');
    s.log.warn(`upstream ${account.id}: body failed (${(err as Error).message})`);
    return { next: 'rotate', held: syntheticHeld(account.id, 502, 'api_error', 'Claude Router: the upstream answer broke off.') };
  }
  if (r.signal.aborted) return { next: 'abort' };
  const usage = usageFromJson(body);
  if (usage === undefined && String(up.headers['content-type'] ?? '').includes('json')) {
    // A 200 whose JSON does not parse is a broken answer, not a success: try another account.
    record('invalid_json');
    s.log.warn(`upstream ${account.id}: 200 with an unreadable JSON body`);
    return { next: 'rotate', held: syntheticHeld(account.id, 502, 'api_error', 'Claude Router: upstream answered 200 with an unreadable body.') };
  }
  r.onCommit(account, attempted);
  record('success');
  const headers = clientResponseHeaders(up.headers);
  delete headers['content-length'];
  r.res.writeHead(up.statusCode, { ...headers, [ACCOUNT_HEADER]: account.id, 'content-length': String(body.length) });
  r.res.end(body);
  return { next: 'served', status: up.statusCode, outcome: 'success', usage: usage ?? null, streamed: false };
}

/** Usage from a JSON answer: null when it has none, undefined when the body is not JSON. */
function usageFromJson(body: Buffer): UsageRecord | null | undefined {
  let json: { usage?: Record<string, unknown> } | null;
  try {
    json = JSON.parse(body.toString('utf8')) as { usage?: Record<string, unknown> } | null;
  } catch {
    return undefined;
  }
  return json && typeof json.usage === 'object' && json.usage ? toUsage(json.usage, null) : null;
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

function toUsage(u: Record<string, unknown>, prev: UsageRecord | null): UsageRecord {
  return {
    inputTokens: u.input_tokens !== undefined ? num(u.input_tokens) : prev?.inputTokens ?? 0,
    outputTokens: u.output_tokens !== undefined ? num(u.output_tokens) : prev?.outputTokens ?? 0,
    cacheCreationInputTokens:
      u.cache_creation_input_tokens !== undefined ? num(u.cache_creation_input_tokens) : prev?.cacheCreationInputTokens ?? 0,
    cacheReadInputTokens: u.cache_read_input_tokens !== undefined ? num(u.cache_read_input_tokens) : prev?.cacheReadInputTokens ?? 0,
  };
}

/** Parses the data of a small event; undefined on garbage. */
function eventJson(data: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(data) as unknown;
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A response the router makes up for a failure that has no HTTP answer of its own (a stream error, a dead connection). */
function syntheticHeld(account: string, status: number, type: string, message: string): HeldResponse {
  return {
    status,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify({ type: 'error', error: { type, message } })),
    account,
  };
}

const STREAM_ERROR_STATUS: Record<string, number> = { overloaded_error: 529, rate_limit_error: 429, api_error: 500 };

async function relayStream(
  r: AttemptRequest,
  s: AttemptServices,
  account: PlanAccount,
  up: Dispatcher.ResponseData,
  attempts: AttemptRecord[],
  ms: number,
  attempted: Set<string>,
): Promise<Step> {
  const framer = new SseFramer();
  let committed = false;
  let sawStop = false;
  let sawError = false;
  let usage: UsageRecord | null = null;
  const record = (result: string) => attempts.push({ account: account.id, status: up.statusCode, result, ms });

  const commit = () => {
    committed = true;
    r.onCommit(account, attempted);
    const headers = clientResponseHeaders(up.headers);
    delete headers['content-length'];
    // No flush: the head goes out with the first events, in one write.
    r.res.writeHead(up.statusCode, { ...headers, [ACCOUNT_HEADER]: account.id });
  };

  // 'data' events, not for-await: for-await hands over everything buffered as one chunk,
  // which would merge a burst of events into one write; each upstream chunk is relayed as it comes.
  let failure: Error | undefined;
  const early = await new Promise<Step | undefined>((resolve) => {
    let done = false;
    const held: Buffer[] = [];
    const resume = () => up.body.resume();
    const finish = (step: Step | undefined) => {
      if (done) return;
      done = true;
      up.body.off('data', onData);
      up.body.off('end', onEnd);
      up.body.off('error', onError);
      r.res.off('drain', resume);
      resolve(step);
    };
    const onData = (raw: Buffer) => {
      try {
        relayChunk(raw);
      } catch (err) {
        // A throw here would escape the stream's event emitter; end this attempt instead.
        failure = err as Error;
        up.body.on('error', () => undefined);
        up.body.destroy();
        finish(undefined);
      }
    };
    const relayChunk = (raw: Buffer) => {
      if (done) return;
      // Only whole events go to the client; a partial event waits for its end.
      const complete = framer.push(raw);
      if (!complete) return;
      for (const ev of scanCompleteEvents(complete)) {
        if (ev.event === 'ping') continue;
        if (!committed) {
          if (ev.event === 'error') {
            const type = String((eventJson(ev.data())?.error as Record<string, unknown> | undefined)?.type ?? 'api_error');
            const cls = classifyStreamError(type, s.now());
            record(`stream_${cls.kind}`);
            applyCooldown(s, account.id, cls, s.now());
            finish({ next: 'rotate', held: syntheticHeld(account.id, STREAM_ERROR_STATUS[type] ?? 500, type, `Upstream stream error before content (${type}).`) });
            // Destroying emits an AbortError nobody needs any more.
            up.body.on('error', () => undefined);
            up.body.destroy();
            return;
          }
          commit();
        }
        if (ev.event === 'message_start') {
          const msg = eventJson(ev.data())?.message as Record<string, unknown> | undefined;
          if (msg?.usage && typeof msg.usage === 'object') usage = toUsage(msg.usage as Record<string, unknown>, usage);
        } else if (ev.event === 'message_delta') {
          const u = eventJson(ev.data())?.usage;
          if (u && typeof u === 'object') usage = toUsage(u as Record<string, unknown>, usage);
        } else if (ev.event === 'message_stop') {
          sawStop = true;
        } else if (ev.event === 'error') {
          sawError = true;
        }
      }
      if (!committed) {
        held.push(complete);
        return;
      }
      const out = held.length > 0 ? Buffer.concat([...held.splice(0), complete]) : complete;
      if (!r.res.write(out)) {
        // Backpressure: the client reads slower than upstream sends.
        up.body.pause();
        r.res.once('drain', resume);
      }
    };
    const onEnd = () => finish(undefined);
    const onError = (err: Error) => {
      failure = err;
      finish(undefined);
    };
    up.body.on('data', onData);
    up.body.once('end', onEnd);
    up.body.once('error', onError);
  });
  if (early) return early;
  if (failure) {
    if (r.signal.aborted) {
      record('client_abort');
      return committed ? { next: 'served', status: up.statusCode, outcome: 'client_abort', usage, streamed: true } : { next: 'abort' };
    }
    if (!committed) {
      record('stream_failed');
      s.log.warn(`upstream ${account.id}: stream failed before content (${failure.message})`);
      return { next: 'rotate', held: syntheticHeld(account.id, 502, 'api_error', 'Claude Router: the upstream stream failed before any content.') };
    }
    s.log.warn(`upstream ${account.id}: stream failed after content (${failure.message})`);
  }

  if (!committed) {
    // An empty stream (or one with only pings) gave the client nothing: rotate.
    record('empty_stream');
    return { next: 'rotate', held: syntheticHeld(account.id, 502, 'api_error', 'Claude Router: the upstream stream ended before any content.') };
  }
  let outcome: DecisionOutcome = 'success';
  if (sawError) outcome = 'error_after_commit';
  else if (!sawStop) {
    // A held partial event is dropped: the client sees whole events, then one clean error.
    outcome = 'truncated';
    r.res.write(sseErrorFrame('api_error', 'Claude Router: the upstream stream ended before message_stop.'));
  }
  record(outcome === 'success' ? 'success' : outcome);
  r.res.end();
  return { next: 'served', status: up.statusCode, outcome, usage, streamed: true };
}
