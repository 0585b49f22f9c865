/**
 * A fake api.anthropic.com: a real HTTP server serving several accounts (one per bearer
 * token) with real SSE framing, unified rate-limit headers, filling/resetting windows, a
 * per-account prompt cache, OAuth token rotation, the usage endpoint, injectable faults and
 * an HTTP control API under `/_sim/`. Deterministic: no randomness; time comes from the
 * injected clock (only SSE pacing and `slow_first_byte` use real timers).
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { SimAccount } from './account';
import { isPersistentFault, validateFault } from './faults';
import { Exchange, betaIncludes, flattenHeaders, readBody } from './http';
import { IdSequence, sha256Hex } from './ids';
import { modelsListBody } from './models';
import { DEFAULT_ACCESS_TOKEN_TTL_MS, TokenRegistry } from './oauth';
import { lastMessageTokensOf, estimateTokens, promptTokensOf } from './promptCache';
import { unifiedHeaders } from './ratelimitHeaders';
import { sessionIdOf } from './session';
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
} from './sse';
import type { FakeUpstream, FakeUpstreamOptions, SimAccountState, SimFault, SimRequestRecord, SimUsage } from './types';
import type { UsageWindow } from './windows';

/** The OAuth beta flag subscription tokens need in `anthropic-beta`. */
export const OAUTH_BETA = 'oauth-2025-04-20';
/** Message of the exhausted-window 429 (also used for throttles, as the real API does). */
export const RATE_LIMIT_MESSAGE = "This request would exceed your account's rate limit. Please try again later.";
/** Message of a 401 for an expired or superseded OAuth token. */
export const EXPIRED_TOKEN_MESSAGE = 'OAuth token has expired. Please obtain a new token or refresh your existing token.';
/** Message of the entitlement 429. */
export const ENTITLEMENT_MESSAGE = 'Extra usage is required for long context requests.';

const DEFAULT_PROMPT_CACHE_TTL_MS = 300_000;

type AuthResult = { ok: true; account: SimAccount } | { ok: false };

interface MessagesBody {
  model: string;
  messages: unknown[];
  system?: unknown;
  tools?: unknown;
  stream?: unknown;
  metadata?: unknown;
}

/** Start a fake upstream; resolves once it listens. */
export async function startFakeUpstream(opts: FakeUpstreamOptions): Promise<FakeUpstream> {
  const sim = new FakeUpstreamServer(opts);
  await sim.listen(opts.host ?? '127.0.0.1', opts.port ?? 0);
  return sim;
}

class FakeUpstreamServer implements FakeUpstream {
  url = '';
  tokenUrl = '';
  readonly requests: SimRequestRecord[] = [];

  private readonly server: http.Server;
  private readonly sockets = new Set<Socket>();
  private readonly sleepers = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  private readonly accounts = new Map<string, SimAccount>();
  private readonly tokens = new TokenRegistry();
  private readonly msgIds = new IdSequence('msg_sim_');
  private readonly reqIds = new IdSequence('req_sim_');
  private readonly clock: () => number;
  private offsetMs = 0;
  private closing: Promise<void> | null = null;
  private readonly deltaCount: number;
  private readonly intervalMs: number;
  private readonly replyText: (label: string) => string;

  constructor(private readonly opts: FakeUpstreamOptions) {
    this.clock = opts.now ?? Date.now;
    this.deltaCount = Math.max(1, Math.floor(opts.sseDeltaCount ?? 3));
    this.intervalMs = Math.max(0, opts.sseIntervalMs ?? 0);
    this.replyText = opts.replyText ?? ((label) => `Hello from ${label}.`);
    const t = this.now();
    for (const spec of opts.accounts) {
      if (!spec.label) throw new Error('account label must be non-empty');
      this.tokens.add(spec.label, spec.accessToken, spec.refreshToken, spec.apiKey === true, spec.accessTokenTtlMs ?? DEFAULT_ACCESS_TOKEN_TTL_MS, t);
      this.accounts.set(spec.label, new SimAccount(spec, t, opts.promptCacheTtlMs ?? DEFAULT_PROMPT_CACHE_TTL_MS));
    }
    this.server = http.createServer((req, res) => this.onRequest(req, res));
    this.server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => undefined);
    });
    this.server.on('clientError', (_err, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
      else socket.destroy();
    });
  }

  listen(host: string, port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        const addr = this.server.address();
        if (addr === null || typeof addr === 'string') return reject(new Error('unexpected server address'));
        const h = addr.family === 'IPv6' || host.includes(':') ? `[${addr.address}]` : addr.address;
        this.url = `http://${h}:${addr.port}`;
        this.tokenUrl = `${this.url}/v1/oauth/token`;
        resolve();
      });
    });
  }

  // ---- public API -------------------------------------------------------------------------

  now(): number {
    return this.clock() + this.offsetMs;
  }

  advanceClock(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new Error('advanceClock: ms must be a non-negative number');
    this.offsetMs += ms;
  }

  private acct(label: string): SimAccount {
    const a = this.accounts.get(label);
    if (!a) throw new Error(`unknown sim account ${JSON.stringify(label)}`);
    return a;
  }

  injectFault(label: string, fault: SimFault, count = 1): void {
    const a = this.acct(label);
    const f = validateFault(fault);
    if (!isPersistentFault(f)) return a.faults.push(f, count);
    if (f.kind === 'expire_token') {
      if (a.apiKey) throw new Error('expire_token does not apply to an apiKey account');
      return this.tokens.expire(label);
    }
    if (a.apiKey) throw new Error('exhaust does not apply to an apiKey account (no windows); use throttle');
    const w = a.window(f.window, true);
    if (!w) throw new Error(`unknown window ${JSON.stringify(f.window)}; use 5h, 7d or 7d_<family>`);
    w.exhaust(this.now(), f.resetInMs, f.perWindowOnly === true);
  }

  clearFaults(label?: string): void {
    const list = label === undefined ? [...this.accounts.values()] : [this.acct(label)];
    for (const a of list) {
      a.faults.clear();
      a.liftExhaustion();
      if (!a.apiKey) this.tokens.unexpire(a.label);
    }
  }

  account(label: string): SimAccountState {
    const a = this.acct(label);
    a.roll(this.now());
    const scoped: SimAccountState['scoped'] = {};
    for (const w of a.scoped) scoped[w.name.slice(3)] = { used: w.utilization, resetAtMs: w.resetAtMs ?? 0 };
    return {
      label,
      ...this.tokens.current(label),
      fiveHourUsed: a.fiveHour.utilization,
      sevenDayUsed: a.sevenDay.utilization,
      fiveHourResetAtMs: a.fiveHour.resetAtMs ?? 0,
      sevenDayResetAtMs: a.sevenDay.resetAtMs ?? 0,
      scoped,
      served: a.served,
      cacheReadTokens: a.cacheReadTokens,
      cacheCreationTokens: a.cacheCreationTokens,
      refreshCount: this.tokens.refreshCount(label),
      pendingFaults: a.faults.kinds(),
    };
  }

  refreshCount(label: string): number {
    this.acct(label);
    return this.tokens.refreshCount(label);
  }

  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closing = new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      for (const s of this.sleepers) {
        clearTimeout(s.timer);
        s.resolve();
      }
      this.sleepers.clear();
      this.server.closeAllConnections();
      for (const s of this.sockets) s.destroy();
    });
    return this.closing;
  }

  // ---- plumbing ---------------------------------------------------------------------------

  /** Real-time delay (ms) that close() cancels. */
  private sleep(ms: number): Promise<void> {
    if (this.closing || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const s = {
        timer: setTimeout(() => {
          this.sleepers.delete(s);
          resolve();
        }, ms),
        resolve,
      };
      this.sleepers.add(s);
    });
  }

  private pushRecord(record: SimRequestRecord): void {
    this.requests.push(record);
    const max = this.opts.maxRecords;
    // Trim in batches so a bounded log stays O(1) amortised per request.
    if (max !== undefined && max >= 0 && this.requests.length > max + Math.max(1, Math.floor(max / 10))) {
      this.requests.splice(0, this.requests.length - max);
    }
  }

  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    const url = req.url ?? '/';
    const path = url.split('?')[0];
    const control = path.startsWith('/_sim/');
    const record: SimRequestRecord | null = control
      ? null
      : { at: this.now(), method: req.method ?? 'GET', path: url, account: null, status: 0, headers: flattenHeaders(req.headers), bodyBytes: 0, bodySha256: '', sessionId: null };
    if (record) this.pushRecord(record);
    const ex = new Exchange(req, res, record, this.reqIds.next());
    this.route(ex, path).catch((err: unknown) => {
      if (!res.headersSent && !ex.gone) ex.error(500, 'api_error', `sim internal error: ${err instanceof Error ? err.message : String(err)}`);
      else res.destroy();
    });
  }

  private async route(ex: Exchange, path: string): Promise<void> {
    const body = await readBody(ex.req);
    if (body === null) return; // client went away
    if (ex.record) {
      ex.record.bodyBytes = body.bytes;
      ex.record.bodySha256 = sha256Hex(body.buf);
    }
    if (body.tooLarge) return ex.error(413, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.');
    const m = ex.req.method ?? 'GET';
    if (path.startsWith('/_sim/')) return this.control(ex, m, path, body.buf);
    if (path === '/api/hello' && (m === 'HEAD' || m === 'GET')) return ex.json(200, {});
    if (m === 'POST' && path === '/v1/messages') return this.messages(ex, body.buf);
    if (m === 'POST' && path === '/v1/messages/count_tokens') return this.countTokens(ex, body.buf);
    if (m === 'GET' && path === '/v1/models') return this.models(ex);
    if (m === 'POST' && path === '/v1/oauth/token') return this.token(ex, body.buf);
    if (m === 'GET' && path === '/api/oauth/usage') return this.usage(ex);
    return ex.error(404, 'not_found_error', `Not found: ${m} ${path}`);
  }

  private header(ex: Exchange, name: string): string | undefined {
    const v = ex.req.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  }

  /** Resolve the account from x-api-key or bearer; on failure the 401 is already sent. */
  private authenticate(ex: Exchange, requireOauthBeta: boolean): AuthResult {
    const fail = (message: string, label: string | null = null, fault?: string): AuthResult => {
      if (ex.record) {
        ex.record.account = label;
        if (fault) ex.record.fault = fault;
      }
      ex.error(401, 'authentication_error', message);
      return { ok: false };
    };
    const apiKey = this.header(ex, 'x-api-key');
    if (apiKey !== undefined) {
      const c = this.tokens.checkApiKey(apiKey);
      if (!c.ok) return fail('invalid x-api-key');
      return this.authed(ex, c.label);
    }
    const authz = this.header(ex, 'authorization');
    if (authz === undefined) return fail('x-api-key header is required');
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authz);
    if (!m) return fail('Invalid bearer token');
    if (requireOauthBeta && !betaIncludes(this.header(ex, 'anthropic-beta'), OAUTH_BETA)) {
      return fail('OAuth authentication is currently not supported.');
    }
    const c = this.tokens.checkAccess(m[1], this.now(), this.opts.enforceTokenExpiry === true);
    if (!c.ok) {
      if (c.reason === 'unknown') return fail('Invalid bearer token');
      return fail(EXPIRED_TOKEN_MESSAGE, c.label, c.byFault ? 'expire_token' : undefined);
    }
    return this.authed(ex, c.label);
  }

  private authed(ex: Exchange, label: string): AuthResult {
    if (ex.record) ex.record.account = label;
    return { ok: true, account: this.acct(label) };
  }

  /** Parse and check a Messages-style body; on failure the 400 is already sent. */
  private parseMessagesBody(ex: Exchange, buf: Buffer): MessagesBody | null {
    if (this.opts.requireVersionHeader !== false && this.header(ex, 'anthropic-version') === undefined) {
      ex.error(400, 'invalid_request_error', 'anthropic-version: header is required');
      return null;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(buf.toString('utf8'));
    } catch {
      ex.error(400, 'invalid_request_error', 'The request body is not valid JSON.');
      return null;
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
      ex.error(400, 'invalid_request_error', 'The request body must be a JSON object.');
      return null;
    }
    const b = parsed as Record<string, unknown>;
    if (ex.record) {
      ex.record.sessionId = sessionIdOf(ex.req.headers, b);
      if (typeof b.model === 'string') ex.record.model = b.model;
    }
    if (typeof b.model !== 'string' || b.model === '') {
      ex.error(400, 'invalid_request_error', 'model: Field required');
      return null;
    }
    if (!Array.isArray(b.messages)) {
      ex.error(400, 'invalid_request_error', 'messages: Field required');
      return null;
    }
    return b as unknown as MessagesBody;
  }

  private accountHeaders(a: SimAccount): Record<string, string> {
    return { 'anthropic-organization-id': a.organizationId };
  }

  // ---- /v1/messages -----------------------------------------------------------------------

  private async messages(ex: Exchange, buf: Buffer): Promise<void> {
    const auth = this.authenticate(ex, true);
    if (!auth.ok) return;
    const a = auth.account;
    const body = this.parseMessagesBody(ex, buf);
    if (!body) return;

    const fault = a.faults.shift();
    if (fault && ex.record) ex.record.fault = fault.kind;
    if (fault?.kind === 'slow_first_byte') {
      await this.sleep(fault.delayMs);
      if (ex.gone) return;
    }

    const now = this.now();
    a.start(now);
    const family = a.familyOf(body.model);
    const stream = body.stream === true;
    const oauth = !a.apiKey;
    const rl = (o: Parameters<typeof unifiedHeaders>[1] = {}): Record<string, string> =>
      oauth ? unifiedHeaders(a.windows(), { family, ...o }) : {};
    const base = this.accountHeaders(a);

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
      default:
        break;
    }

    if (oauth) {
      const rej = a.rejection(family);
      if (rej) {
        if (ex.record) ex.record.fault = rej.windows.some((w: UsageWindow) => w.exhaustedByFault) ? 'exhaust' : 'window_full';
        const perWindowOnly = rej.windows.every((w: UsageWindow) => w.perWindowOnly);
        return ex.error(429, 'rate_limit_error', RATE_LIMIT_MESSAGE, { ...base, ...rl({ perWindowOnly }) });
      }
    }

    const sessionId = sessionIdOf(ex.req.headers, body);
    const prompt = promptTokensOf(body);
    const text = this.replyText(a.label);
    const usage: SimUsage = { ...a.cache.plan(sessionId, prompt, lastMessageTokensOf(body), now), output_tokens: Math.max(1, estimateTokens(text)) };
    const answer: AnswerSpec = { id: this.msgIds.next(), model: body.model, text, usage };

    if (fault?.kind === 'overloaded_in_stream') {
      if (!stream) return ex.error(529, 'overloaded_error', 'Overloaded', base, 'Overloaded');
      return this.sse(ex, { ...base, ...rl() }, [errorEvent('overloaded_error', 'Overloaded')], 'end');
    }
    if (fault?.kind === 'error_after_content') {
      if (!stream) return ex.error(500, 'api_error', 'Internal server error', base);
      const parts = splitText(text, 2);
      const events: SseEvent[] = [messageStartEvent(answer), contentBlockStartEvent(), textDeltaEvent(parts[0]), textDeltaEvent(parts[1]), errorEvent('api_error', 'Internal server error')];
      return this.sse(ex, { ...base, ...rl() }, events, 'end');
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
      const events: SseEvent[] = [messageStartEvent(answer), contentBlockStartEvent(), pingEvent(), ...splitText(text, this.deltaCount).map(textDeltaEvent)];
      return this.sse(ex, { ...base, ...rl() }, events, how);
    }

    // Served: count it, then answer with the headers as they stand after this request.
    a.charge(usage, family);
    a.cache.commit(sessionId, prompt, now);
    if (ex.record) ex.record.usage = { ...usage };
    if (!stream) return ex.json(200, messageObject(answer), { ...base, ...rl() });
    return this.sse(ex, { ...base, ...rl() }, successEvents(answer, this.deltaCount), 'end');
  }

  /** Stream events, each its own write, `sseIntervalMs` apart; then end or cut the connection. */
  private async sse(ex: Exchange, headers: Record<string, string>, events: SseEvent[], finish: 'end' | 'cut'): Promise<void> {
    ex.head(200, { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    for (let i = 0; i < events.length; i++) {
      if (i > 0 && this.intervalMs > 0) await this.sleep(this.intervalMs);
      if (ex.gone) return;
      // Each event is its own write. Unpaced streams only wait for the last write to flush (before a cut).
      const last = i === events.length - 1;
      if (this.intervalMs > 0 || (last && finish === 'cut')) {
        if (!(await ex.write(frameEvent(events[i])))) return;
      } else {
        void ex.write(frameEvent(events[i]));
      }
    }
    if (finish === 'cut') ex.cut();
    else ex.end();
  }

  // ---- other API endpoints ----------------------------------------------------------------

  private countTokens(ex: Exchange, buf: Buffer): void {
    const auth = this.authenticate(ex, true);
    if (!auth.ok) return;
    const body = this.parseMessagesBody(ex, buf);
    if (!body) return;
    ex.json(200, { input_tokens: promptTokensOf(body) }, this.accountHeaders(auth.account));
  }

  private models(ex: Exchange): void {
    const auth = this.authenticate(ex, true);
    if (!auth.ok) return;
    ex.json(200, modelsListBody(), this.accountHeaders(auth.account));
  }

  private usage(ex: Exchange): void {
    const auth = this.authenticate(ex, false);
    if (!auth.ok) return;
    const a = auth.account;
    if (a.apiKey) return ex.error(401, 'authentication_error', 'OAuth authentication is required for this endpoint.');
    if (!a.usageEndpoint) return ex.error(403, 'permission_error', 'OAuth token does not meet scope requirement user:profile');
    a.roll(this.now());
    const view = (w: UsageWindow | undefined): { utilization: number; resets_at: string | null } | null =>
      w ? { utilization: Number((w.utilization * 100).toFixed(2)), resets_at: w.resetAtMs === null ? null : new Date(w.resetAtMs).toISOString() } : null;
    const out: Record<string, unknown> = {
      five_hour: view(a.fiveHour),
      seven_day: view(a.sevenDay),
      seven_day_oauth_apps: null,
      seven_day_opus: view(a.window('7d_opus')),
      seven_day_sonnet: view(a.window('7d_sonnet')),
    };
    for (const w of a.scoped) out[w.name.replace(/^7d_/, 'seven_day_')] = view(w);
    out.extra_usage = { is_enabled: false, monthly_limit: null, used_credits: null, utilization: null };
    ex.json(200, out, this.accountHeaders(a));
  }

  private token(ex: Exchange, buf: Buffer): void {
    const text = buf.toString('utf8');
    let p: Record<string, unknown> = {};
    try {
      const ct = this.header(ex, 'content-type') ?? '';
      if (ct.includes('application/x-www-form-urlencoded')) p = Object.fromEntries(new URLSearchParams(text));
      else {
        const j: unknown = JSON.parse(text);
        if (j && typeof j === 'object' && !Array.isArray(j)) p = j as Record<string, unknown>;
      }
    } catch {
      return ex.json(400, { error: 'invalid_request', error_description: 'Invalid request body' });
    }
    const now = this.now();
    if (p.grant_type === 'refresh_token') {
      const r = typeof p.refresh_token === 'string' ? this.tokens.refreshGrant(p.refresh_token, now) : null;
      if (!r) return ex.json(400, { error: 'invalid_grant', error_description: 'Refresh token not found or invalid' });
      if (ex.record) ex.record.account = r.label;
      return ex.json(200, r.grant);
    }
    if (p.grant_type === 'authorization_code') {
      if (typeof p.code_verifier !== 'string' || p.code_verifier === '') {
        return ex.json(400, { error: 'invalid_request', error_description: 'Missing code_verifier' });
      }
      const r = typeof p.code === 'string' ? this.tokens.codeGrant(p.code, now) : null;
      if (!r) return ex.json(400, { error: 'invalid_grant', error_description: 'Invalid authorization code' });
      if (ex.record) ex.record.account = r.label;
      return ex.json(200, r.grant);
    }
    return ex.json(400, { error: 'unsupported_grant_type', error_description: `Unsupported grant_type ${JSON.stringify(p.grant_type)}` });
  }

  // ---- control API ------------------------------------------------------------------------

  private control(ex: Exchange, method: string, path: string, buf: Buffer): void {
    const parse = (): Record<string, unknown> => {
      if (buf.length === 0) return {};
      const j: unknown = JSON.parse(buf.toString('utf8'));
      if (!j || typeof j !== 'object' || Array.isArray(j)) throw new Error('body must be a JSON object');
      return j as Record<string, unknown>;
    };
    try {
      if (method === 'GET' && path === '/_sim/state') return ex.json(200, this.publicState());
      if (method === 'POST' && path === '/_sim/fault') {
        const b = parse();
        if (typeof b.label !== 'string') throw new Error('label must be a string');
        const count = b.count === undefined ? 1 : Number(b.count);
        this.injectFault(b.label, b.fault as SimFault, count);
        return ex.json(200, { ok: true, pendingFaults: this.acct(b.label).faults.kinds() });
      }
      if (method === 'POST' && path === '/_sim/clear') {
        const b = parse();
        if (b.label !== undefined && typeof b.label !== 'string') throw new Error('label must be a string');
        this.clearFaults(b.label as string | undefined);
        return ex.json(200, { ok: true });
      }
      if (method === 'POST' && path === '/_sim/advance') {
        this.advanceClock(Number(parse().ms));
        return ex.json(200, { ok: true, now: this.now() });
      }
      return ex.json(404, { error: `no control endpoint ${method} ${path}` });
    } catch (e) {
      return ex.json(400, { error: e instanceof Error ? e.message : String(e) });
    }
  }

  /** `/_sim/state`: every account's state without its tokens. */
  private publicState(): { now: number; accounts: Array<Omit<SimAccountState, 'accessToken' | 'refreshToken'>> } {
    const accounts = [...this.accounts.keys()].map((label) => {
      const { accessToken: _a, refreshToken: _r, ...rest } = this.account(label);
      return rest;
    });
    return { now: this.now(), accounts };
  }
}
