/**
 * Polls `GET /api/oauth/usage` for accounts whose quota evidence is missing
 * or due for a refresh (docs/routing.md#freshness: a `refresh_due` snapshot
 * "triggers a usage-endpoint refresh"). The endpoint is itself rate-limited
 * per account and per IP (docs/anthropic-api.md#usage-endpoint), so calls are paced globally,
 * jittered, spaced per account, and a 429's `retry-after` pauses all polling.
 * Live response headers are preferred: an account with fresh evidence is
 * never polled. A 403 (long-lived setup-token without `user:profile`) stops
 * polling that account for good.
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
}

export class UsagePoller {
  private timer: NodeJS.Timeout | undefined;
  private readonly lastPolled = new Map<string, number>();
  private readonly unavailable = new Set<string>();
  private pausedUntil = 0;
  private busy = false;
  private readonly now: () => number;

  constructor(private readonly opts: UsagePollerOptions) {
    this.now = opts.now ?? Date.now;
  }

  start(): void {
    if (this.timer) return;
    const schedule = () => {
      const delay = (this.opts.tickMs ?? 15_000) + Math.random() * (this.opts.jitterMs ?? 3_000);
      this.timer = setTimeout(() => {
        void this.tick().finally(schedule);
      }, delay);
      this.timer.unref();
    };
    schedule();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The next account due for a poll at `now`, or undefined. */
  due(now: number): string | undefined {
    if (now < this.pausedUntil) return undefined;
    const spacing = this.opts.perAccountMs ?? 300_000;
    return this.opts.accounts().find((label) => {
      if (this.unavailable.has(label)) return false;
      const f = this.opts.freshness(label);
      if (f === 'fresh') return false;
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
