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
import { validConcurrencyLimit } from './concurrency';
import { control } from './endpoints/control';
import { countTokens } from './endpoints/countTokens';
import type { SimHost } from './endpoints/host';
import { messages } from './endpoints/messages';
import { models } from './endpoints/models';
import { token } from './endpoints/token';
import { usage } from './endpoints/usage';
import { isPersistentFault, validateFault } from './faults';
import { Exchange, flattenHeaders, readBody } from './http';
import { IdSequence, sha256Hex } from './ids';
import { DEFAULT_ACCESS_TOKEN_TTL_MS, TokenRegistry } from './oauth';
import type { FakeUpstream, FakeUpstreamOptions, SimAccountState, SimFault, SimRequestRecord } from './types';

const DEFAULT_PROMPT_CACHE_TTL_MS = 300_000;

/** Start a fake upstream; resolves once it listens. */
export async function startFakeUpstream(opts: FakeUpstreamOptions): Promise<FakeUpstream> {
  const sim = new FakeUpstreamServer(opts);
  await sim.listen(opts.host ?? '127.0.0.1', opts.port ?? 0);
  return sim;
}

class FakeUpstreamServer implements FakeUpstream, SimHost {
  url = '';
  tokenUrl = '';
  readonly requests: SimRequestRecord[] = [];

  private readonly server: http.Server;
  private readonly sockets = new Set<Socket>();
  private readonly sleepers = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  private readonly accounts = new Map<string, SimAccount>();
  readonly tokens = new TokenRegistry();
  private readonly msgIds = new IdSequence('msg_sim_');
  private readonly reqIds = new IdSequence('req_sim_');
  private readonly clock: () => number;
  private offsetMs = 0;
  /** Recorded requests so far (control requests excluded). */
  private arrivals = 0;
  private closing: Promise<void> | null = null;
  readonly sseDeltaCount: number;
  readonly sseIntervalMs: number;
  readonly replyText: (label: string) => string;

  constructor(readonly opts: FakeUpstreamOptions) {
    this.clock = opts.now ?? Date.now;
    this.sseDeltaCount = Math.max(1, Math.floor(opts.sseDeltaCount ?? 3));
    this.sseIntervalMs = Math.max(0, opts.sseIntervalMs ?? 0);
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

  acct(label: string): SimAccount {
    const a = this.accounts.get(label);
    if (!a) throw new Error(`unknown sim account ${JSON.stringify(label)}`);
    return a;
  }

  injectFault(label: string, fault: SimFault, count = 1): void {
    const a = this.acct(label);
    const f = validateFault(fault);
    // Checked now, not when the one-shot fault is met: a window name that is not one fails here.
    if (f.kind === 'exhaust_after_answer' && (a.apiKey || !a.window(f.window, true)))
      throw new Error(`exhaust_after_answer needs a subscription account and a window (5h, 7d or 7d_<family>), got ${JSON.stringify(f.window)}`);
    if (!isPersistentFault(f)) return a.faults.push(f, count);
    if (f.kind === 'throttle_window') return a.throttleWindow.start(this.now(), f.durationMs, f.retryAfterS);
    if (f.kind === 'expire_token') {
      if (a.apiKey) throw new Error('expire_token does not apply to an apiKey account');
      return this.tokens.expire(label);
    }
    a.exhaust(f.window, this.now(), f.resetInMs, f.perWindowOnly === true);
  }

  setConcurrencyLimit(label: string, limit: number | null): void {
    this.acct(label).concurrency.limit = validConcurrencyLimit(limit);
  }

  clearFaults(label?: string): void {
    const list = label === undefined ? [...this.accounts.values()] : [this.acct(label)];
    for (const a of list) {
      a.faults.clear();
      a.throttleWindow.clear();
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
      spentRefreshes: this.tokens.spentRefreshes(label),
      pendingFaults: a.faults.kinds(),
      inflight: a.concurrency.inflight,
      maxInflight: a.concurrency.maxInflight,
      concurrencyLimit: a.concurrency.limit,
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

  nextMessageId(): string {
    return this.msgIds.next();
  }

  /** Real-time delay (ms) that close() cancels. */
  sleep(ms: number): Promise<void> {
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
    const isControl = path.startsWith('/_sim/');
    const record: SimRequestRecord | null = isControl
      ? null
      : { at: this.now(), method: req.method ?? 'GET', path: url, account: null, status: 0, headers: flattenHeaders(req.headers), bodyBytes: 0, bodySha256: '', sessionId: null };
    if (record) this.pushRecord(record);
    if (record) record.seq = ++this.arrivals;
    const ex = new Exchange(req, res, record, this.reqIds.next(), () => this.arrivals);
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
    if (path.startsWith('/_sim/')) return control(this, ex, m, path, body.buf);
    if (path === '/api/hello' && (m === 'HEAD' || m === 'GET')) return ex.json(200, {});
    if (m === 'POST' && path === '/v1/messages') return messages(this, ex, body.buf);
    if (m === 'POST' && path === '/v1/messages/count_tokens') return countTokens(this, ex, body.buf);
    if (m === 'GET' && path === '/v1/models') return models(this, ex);
    if (m === 'POST' && path === '/v1/oauth/token') return token(this, ex, body.buf);
    if (m === 'GET' && path === '/api/oauth/usage') return usage(this, ex);
    return ex.error(404, 'not_found_error', `Not found: ${m} ${path}`);
  }

  /** `/_sim/state`: every account's state without its tokens. */
  publicState(): { now: number; accounts: Array<Omit<SimAccountState, 'accessToken' | 'refreshToken'>> } {
    const accounts = [...this.accounts.keys()].map((label) => {
      const { accessToken: _a, refreshToken: _r, ...rest } = this.account(label);
      return rest;
    });
    return { now: this.now(), accounts };
  }
}
