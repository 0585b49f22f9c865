/**
 * `POST /v1/messages`: queued faults first, then the account's rate-limit windows, then a
 * running throttle window, then a served answer (JSON or SSE) that charges the windows and the prompt cache.
 */
import type { Exchange } from '../http';
import { lastMessageTokensOf, estimateTokens, promptTokensOf } from '../promptCache';
import { unifiedHeaders } from '../ratelimitHeaders';
import { sessionIdOf } from '../session';
import {
  AnswerSpec,
  SseEvent,
  contentBlockStartEvent,
  errorEvent,
  frameEvent,
  messageObject,
  messageStartEvent,
  pingEvent,
  splitText,
  successEvents,
  textDeltaEvent,
} from '../sse';
import type { SimUsage } from '../types';
import type { UsageWindow } from '../windows';
import type { SimHost } from './host';
import { accountHeaders, authenticate, parseMessagesBody } from './request';

/** Message of the exhausted-window 429 (also used for throttles, as the real API does). */
export const RATE_LIMIT_MESSAGE = "This request would exceed your account's rate limit. Please try again later.";
/** Message of the entitlement 429. */
export const ENTITLEMENT_MESSAGE = 'Extra usage is required for long context requests.';

/** The error type of each error status an `echo_headers` fault answers with. */
const ECHO_ERROR_TYPE = { 400: 'invalid_request_error', 401: 'authentication_error', 500: 'api_error' } as const;

/** Answers one Messages request of `host`'s accounts (the answer is sent on `ex`; `buf` is the raw body). */
export async function messages(host: SimHost, ex: Exchange, buf: Buffer): Promise<void> {
  const auth = authenticate(host, ex, true);
  if (!auth.ok) return;
  const a = auth.account;
  const body = parseMessagesBody(host, ex, buf);
  if (!body) return;
  const gate = a.concurrency.enter(ex.res);
  if (ex.record) ex.record.inflight = gate.inflight;
  if (gate.throttled) {
    if (ex.record) ex.record.fault = 'concurrency';
    const allowed = a.apiKey ? {} : unifiedHeaders(a.windows(), { family: a.familyOf(body.model), forceAllowed: true });
    return ex.error(429, 'rate_limit_error', RATE_LIMIT_MESSAGE, { ...accountHeaders(a), ...allowed });
  }

  const fault = a.faults.shift();
  if (fault && ex.record) ex.record.fault = fault.kind;
  if (fault?.kind === 'slow_first_byte') {
    await host.sleep(fault.delayMs);
    if (ex.gone) return;
  }

  const now = host.now();
  a.start(now);
  const family = a.familyOf(body.model);
  const stream = body.stream === true;
  const oauth = !a.apiKey;
  const rl = (o: Parameters<typeof unifiedHeaders>[1] = {}): Record<string, string> => (oauth ? unifiedHeaders(a.windows(), { family, ...o }) : {});
  const base = accountHeaders(a);

  switch (fault?.kind) {
    case 'throttle':
      return ex.error(429, 'rate_limit_error', RATE_LIMIT_MESSAGE, { ...base, ...rl({ forceAllowed: true }), 'retry-after': String(fault.retryAfterS) });
    case 'headerless_429':
      return ex.error(429, 'rate_limit_error', 'Error', base);
    case 'entitlement_429':
      return ex.error(429, 'rate_limit_error', ENTITLEMENT_MESSAGE, { ...base, ...rl() });
    case 'overloaded_529':
      return ex.error(529, 'overloaded_error', 'Overloaded', base, 'Overloaded');
    case 'server_error':
      return ex.error(fault.status, 'api_error', fault.status === 500 ? 'Internal server error' : `Upstream error (${fault.status})`, base);
    case 'html_error': {
      const page = `<html><body><h1>${fault.status} Error</h1>${'<p>upstream unavailable</p>'.repeat(Math.ceil(fault.bytes / 28))}</body></html>`;
      ex.head(fault.status, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(page) });
      return ex.end(page);
    }
    case 'forbidden':
      return ex.error(403, 'permission_error', 'OAuth token has been revoked.', base);
    case 'bad_request':
      return ex.error(400, 'invalid_request_error', 'prompt is too long: 250000 tokens > 200000 maximum', base);
    case 'echo_headers': {
      const echoed = `request headers: ${JSON.stringify(ex.req.headers)}`;
      if (fault.status !== 200) return ex.error(fault.status, ECHO_ERROR_TYPE[fault.status], echoed, base);
      const usage: SimUsage = { input_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 };
      return ex.json(200, messageObject({ id: host.nextMessageId(), model: body.model, text: echoed, usage }), { ...base, ...rl() });
    }
    case 'error_after_content':
    case 'exhaust':
    case 'exhaust_after_answer':
    case 'throttle_window':
    case 'expire_token':
    case 'overloaded_in_stream':
    case 'slow_first_byte':
    case 'truncate':
    case undefined:
      break; // faults that act later in the answer (below), or none
  }

  if (oauth) {
    const rej = a.rejection(family);
    if (rej) {
      if (ex.record) ex.record.fault = rej.windows.some((w: UsageWindow) => w.exhaustedByFault) ? 'exhaust' : 'window_full';
      const perWindowOnly = rej.windows.every((w: UsageWindow) => w.perWindowOnly);
      return ex.error(429, 'rate_limit_error', RATE_LIMIT_MESSAGE, { ...base, ...rl({ perWindowOnly }) });
    }
  }

  const throttledFor = a.throttleWindow.retryAfterAt(now);
  if (throttledFor !== undefined) {
    if (ex.record) ex.record.fault = 'throttle_window';
    return ex.error(429, 'rate_limit_error', RATE_LIMIT_MESSAGE, { ...base, ...rl({ forceAllowed: true }), 'retry-after': String(throttledFor) });
  }

  const sessionId = sessionIdOf(ex.req.headers, body);
  const prompt = promptTokensOf(body);
  const text = host.replyText(a.label);
  const usage: SimUsage = { ...a.cache.plan(sessionId, prompt, lastMessageTokensOf(body), now), output_tokens: Math.max(1, estimateTokens(text)) };
  const answer: AnswerSpec = { id: host.nextMessageId(), model: body.model, text, usage };

  if (fault?.kind === 'overloaded_in_stream') {
    if (!stream) return ex.error(529, 'overloaded_error', 'Overloaded', base, 'Overloaded');
    return sse(host, ex, { ...base, ...rl() }, [errorEvent('overloaded_error', 'Overloaded')], 'end');
  }
  if (fault?.kind === 'error_after_content') {
    if (!stream) return ex.error(500, 'api_error', 'Internal server error', base);
    const parts = splitText(text, 2);
    const events: SseEvent[] = [
      messageStartEvent(answer),
      contentBlockStartEvent(),
      textDeltaEvent(parts[0]),
      textDeltaEvent(parts[1]),
      errorEvent('api_error', 'Internal server error'),
    ];
    return sse(host, ex, { ...base, ...rl() }, events, 'end');
  }
  if (fault?.kind === 'truncate') {
    const how = fault.clean ? 'end' : 'cut';
    if (!stream) {
      const full = Buffer.from(JSON.stringify(messageObject(answer)), 'utf8');
      const half = full.subarray(0, Math.floor(full.length / 2));
      ex.head(200, { ...base, ...rl(), 'content-type': 'application/json', 'content-length': fault.clean ? half.length : full.length });
      await ex.write(half);
      return how === 'cut' ? ex.cut() : ex.end();
    }
    const events: SseEvent[] = [messageStartEvent(answer), contentBlockStartEvent(), pingEvent(), ...splitText(text, host.sseDeltaCount).map(textDeltaEvent)];
    return sse(host, ex, { ...base, ...rl() }, events, how);
  }

  // Served: count it, then answer with the headers as they stand after this request.
  a.charge(usage, family);
  a.cache.commit(sessionId, prompt, now);
  if (fault?.kind === 'exhaust_after_answer') a.exhaust(fault.window, now, fault.resetInMs, false);
  if (ex.record) ex.record.usage = { ...usage };
  if (!stream) return ex.json(200, messageObject(answer), { ...base, ...rl() });
  return sse(host, ex, { ...base, ...rl() }, successEvents(answer, host.sseDeltaCount), 'end');
}

/** Stream events, each its own write, `sseIntervalMs` apart; then end or cut the connection. */
async function sse(host: SimHost, ex: Exchange, headers: Record<string, string>, events: SseEvent[], finish: 'end' | 'cut'): Promise<void> {
  ex.head(200, { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  for (let i = 0; i < events.length; i++) {
    if (i > 0 && host.sseIntervalMs > 0) await host.sleep(host.sseIntervalMs);
    if (ex.gone) return;
    // Each event is its own write. Unpaced streams only wait for the last write to flush (before a cut).
    const last = i === events.length - 1;
    if (host.sseIntervalMs > 0 || (last && finish === 'cut')) {
      if (!(await ex.write(frameEvent(events[i])))) return;
    } else {
      void ex.write(frameEvent(events[i]));
    }
  }
  if (finish === 'cut') ex.cut();
  else ex.end();
}
