/**
 * Polls `GET /api/oauth/usage` for accounts whose quota evidence is missing
 * or due for a refresh (docs/routing.md#freshness: a `refresh_due` snapshot
 * "triggers a usage-endpoint refresh"), and for accounts cooled for an
 * exhausted window, which earn no header evidence while they serve nothing
 * (docs/routing.md#recovery). Anthropic throttles this endpoint as well, per account and per IP
 * address (docs/anthropic-api.md#usage-endpoint), so calls are paced globally,
 * jittered, spaced per account, and a 429's `retry-after` pauses all polling.
 * At start every due account is read once, one call a second (the start-up
 * sweep), then one call per tick. Otherwise live response headers are
 * preferred: an account with fresh evidence is not polled. A 403 (long-lived
 * setup-token without `user:profile`) stops polling that account for good.
 */
import { request, type Dispatcher } from 'undici';
import { parseUsagePayload } from '../quota/usage';
import { parseRetryAfterMs } from '../quota/time';
import type { QuotaSnapshot } from '../quota/types';
import type { QuotaFreshness } from '../routing/metrics';
import type { Credentials } from './types';

export interface UsagePollerOptions {
  /** Current upstream base URL, e.g. `https://api.anthropic.com` (follows config reloads). */
  baseUrl: () => string;
  /** OAuth accounts to consider, in order (labels). */
  accounts: () => readonly string[];
  /** Current freshness of an account's evidence. */
  freshness: (label: string) => QuotaFreshness;
  /** An account to read even while its evidence is fresh (cooled for an exhausted window: it serves nothing, so nothing refreshes it). */
  wantsReading?: (label: string) => boolean;
  credentials: (label: string) => Promise<Credentials>;
  /** Stores a snapshot; `sentAtMs` is when the usage request was sent (epoch ms). */
  record: (label: string, snapshot: QuotaSnapshot, sentAtMs: number) => void;
  log?: (message: string) => void;
  now?: () => number;
  dispatcher?: Dispatcher;
  /** Tick interval, ms (default 15 s). One call at most per tick. */
  tickMs?: number;
  /** Minimum time between two polls of one account, ms (default 5 min). */
  perAccountMs?: number;
  /** Random jitter added to a tick, ms (default 3 s). */
  jitterMs?: number;
  /** Between two calls of the start-up sweep, ms (default 1 s, plus up to half of it as jitter). */
  sweepSpacingMs?: number;
}

export class UsagePoller {
  private timer: NodeJS.Timeout | undefined;
  private readonly lastPolled = new Map<string, number>();
  private readonly unavailable = new Set<string>();
  private pausedUntil = 0;
  private busy = false;
  /** Counts start() and stop() calls: a tick of an earlier run schedules nothing. */
  private runs = 0;
  private readonly now: () => number;

  constructor(private readonly opts: UsagePollerOptions) {
    this.now = opts.now ?? Date.now;
  }

  /**
   * Starts polling: the start-up sweep first — a call at once, then one every `sweepSpacingMs` while
   * an account is due — then one call per tick (`tickMs` plus jitter).
   */
  start(): void {
    if (this.timer) return;
    const run = ++this.runs;
    const spacing = this.opts.sweepSpacingMs ?? 1_000;
    let sweeping = true;
    const schedule = (delay: number) => {
      this.timer = setTimeout(() => {
        void this.tick().finally(() => {
          if (run !== this.runs) return; // stopped (and maybe started again) meanwhile
          sweeping &&= this.due(this.now()) !== undefined;
          schedule(sweeping ? spacing + Math.random() * (spacing / 2) : (this.opts.tickMs ?? 15_000) + Math.random() * (this.opts.jitterMs ?? 3_000));
        });
      }, delay);
      this.timer.unref();
    };
    schedule(0);
  }

  stop(): void {
    this.runs++;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The next account due for a poll at `now`, or undefined. */
  due(now: number): string | undefined {
    if (now < this.pausedUntil) return undefined;
    const spacing = this.opts.perAccountMs ?? 300_000;
    return this.opts.accounts().find((label) => {
      if (this.unavailable.has(label)) return false;
      if (this.opts.freshness(label) === 'fresh' && !this.opts.wantsReading?.(label)) return false;
      return now - (this.lastPolled.get(label) ?? -Infinity) >= spacing;
    });
  }

  /** Polls at most one due account. Never throws. */
  async tick(): Promise<void> {
    if (this.busy) return;
    const label = this.due(this.now());
    if (!label) return;
    this.busy = true;
    const sentAtMs = this.now();
    this.lastPolled.set(label, sentAtMs);
    try {
      const creds = await this.opts.credentials(label);
      const res = await request(`${this.opts.baseUrl()}/api/oauth/usage`, {
        dispatcher: this.opts.dispatcher,
        headers: { authorization: `Bearer ${creds.accessToken}`, 'anthropic-beta': 'oauth-2025-04-20', accept: 'application/json' },
        headersTimeout: 15_000,
        bodyTimeout: 15_000,
      });
      const text = await res.body.text();
      if (res.statusCode === 200) {
        const payload = parseJson(text);
        // JSON.parse's message quotes the body, which the log must not: only its size is logged.
        if (payload === undefined) this.opts.log?.(`usage endpoint: ${label} answered 200 with a body that is not JSON (${Buffer.byteLength(text)} bytes)`);
        const snap = payload === undefined ? undefined : parseUsagePayload(payload, this.now());
        if (snap) this.opts.record(label, snap, sentAtMs);
      } else if (res.statusCode === 403) {
        this.unavailable.add(label);
        this.opts.log?.(`usage endpoint: ${label} has no access (403); relying on response headers`);
      } else if (res.statusCode === 429) {
        const ra = res.headers['retry-after'];
        const wait = parseRetryAfterMs(Array.isArray(ra) ? ra[0] : ra, this.now()) ?? 600_000;
        this.pausedUntil = this.now() + wait;
        this.opts.log?.(`usage endpoint: rate-limited, pausing polls for ${Math.round(wait / 1000)} s`);
      } else {
        this.opts.log?.(`usage endpoint: ${label} answered ${res.statusCode}`);
      }
    } catch (err) {
      this.opts.log?.(`usage endpoint: ${label}: ${(err as Error).message}`);
    } finally {
      this.busy = false;
    }
  }
}

/** `text` parsed as JSON, or undefined when it is not JSON. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
