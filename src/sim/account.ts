/**
 * One fake account's mutable state: windows, prompt cache, fault queue, counters.
 * (Credentials live in the TokenRegistry.)
 */
import { ConcurrencyGate } from './concurrency';
import { FaultQueue } from './faults';
import { simUuid } from './ids';
import { PromptCache } from './promptCache';
import type { AccountWindows } from './ratelimitHeaders';
import { ThrottleWindow } from './throttleWindow';
import type { SimAccountSpec, SimUsage } from './types';
import {
  DEFAULT_FIVE_HOUR_LIMIT_TOKENS,
  DEFAULT_SEVEN_DAY_LIMIT_TOKENS,
  FIVE_HOUR_MS,
  SEVEN_DAY_MS,
  UsageWindow,
  canonicalWindowName,
  chargedTokens,
  modelFamily,
} from './windows';

function checkFraction(v: number | undefined, what: string): number {
  if (v === undefined) return 0;
  if (!Number.isFinite(v) || v < 0) throw new Error(`${what} must be a non-negative fraction`);
  return v;
}

function checkLimit(v: number | undefined, dflt: number, what: string): number {
  if (v === undefined) return dflt;
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${what} must be a positive number of tokens`);
  return v;
}

/** Initial reset: explicit ms from now, else started at `nowMs` if already in use, else not started. */
function initialReset(nowMs: number, resetInMs: number | undefined, used: number, durationMs: number): number | null {
  if (resetInMs !== undefined) return nowMs + resetInMs;
  return used > 0 ? nowMs + durationMs : null;
}

/** Mutable state of one account. */
export class SimAccount {
  readonly label: string;
  readonly apiKey: boolean;
  readonly usageEndpoint: boolean;
  /** Value of `anthropic-organization-id`. */
  readonly organizationId: string;
  readonly fiveHour: UsageWindow;
  readonly sevenDay: UsageWindow;
  readonly scoped: UsageWindow[] = [];
  readonly cache: PromptCache;
  readonly faults = new FaultQueue();
  readonly throttleWindow = new ThrottleWindow();
  /** Its Messages requests in flight, and the concurrency limit scripted for it. */
  readonly concurrency = new ConcurrencyGate();
  served = 0;
  cacheReadTokens = 0;
  cacheCreationTokens = 0;

  /** @param nowMs creation time, epoch ms; @param cacheTtlMs prompt-cache TTL, ms */
  constructor(spec: SimAccountSpec, nowMs: number, cacheTtlMs: number) {
    this.label = spec.label;
    this.apiKey = spec.apiKey === true;
    this.usageEndpoint = spec.usageEndpoint !== false;
    this.organizationId = simUuid(`org:${spec.label}`);
    const u5 = checkFraction(spec.initialFiveHourUsed, 'initialFiveHourUsed');
    const u7 = checkFraction(spec.initialSevenDayUsed, 'initialSevenDayUsed');
    this.fiveHour = new UsageWindow(
      '5h',
      FIVE_HOUR_MS,
      checkLimit(spec.fiveHourLimitTokens, DEFAULT_FIVE_HOUR_LIMIT_TOKENS, 'fiveHourLimitTokens'),
      u5,
      initialReset(nowMs, spec.fiveHourResetInMs, u5, FIVE_HOUR_MS),
    );
    this.sevenDay = new UsageWindow(
      '7d',
      SEVEN_DAY_MS,
      checkLimit(spec.sevenDayLimitTokens, DEFAULT_SEVEN_DAY_LIMIT_TOKENS, 'sevenDayLimitTokens'),
      u7,
      initialReset(nowMs, spec.sevenDayResetInMs, u7, SEVEN_DAY_MS),
    );
    for (const [family, w] of Object.entries(spec.scopedWindows ?? {})) {
      const key = family.toLowerCase();
      const used = checkFraction(w.initialUsed, `scopedWindows.${family}.initialUsed`);
      this.scoped.push(
        new UsageWindow(`7d_${key}`, SEVEN_DAY_MS, checkLimit(w.limitTokens, 0, `scopedWindows.${family}.limitTokens`), used, initialReset(nowMs, w.resetInMs, used, SEVEN_DAY_MS)),
      );
    }
    this.cache = new PromptCache(cacheTtlMs);
  }

  /** Families that have a scoped window. */
  scopedFamilies(): string[] {
    return this.scoped.map((w) => w.name.slice(3));
  }

  /** Family of a model id for this account (configured scoped keys first). */
  familyOf(model: string): string | null {
    return modelFamily(model, this.scopedFamilies());
  }

  /** The windows for header building. */
  windows(): AccountWindows {
    return { fiveHour: this.fiveHour, sevenDay: this.sevenDay, scoped: this.scoped };
  }

  private all(): UsageWindow[] {
    return [this.fiveHour, this.sevenDay, ...this.scoped];
  }

  /** Expire windows whose reset passed (read-only views use this). */
  roll(nowMs: number): void {
    for (const w of this.all()) w.roll(nowMs);
  }

  /** Roll and start every window (a /v1/messages request arrived at `nowMs`). */
  start(nowMs: number): void {
    for (const w of this.all()) w.start(nowMs);
  }

  /**
   * Window by any spelling (`5h`, `seven_day`, `7d_opus`, …). With `create`, a missing scoped
   * window is added with the 7d window's size. Undefined if the name is not a window name.
   */
  window(name: string, create = false): UsageWindow | undefined {
    const c = canonicalWindowName(name);
    if (c === null) return undefined;
    if (c === '5h') return this.fiveHour;
    if (c === '7d') return this.sevenDay;
    let w = this.scoped.find((s) => s.name === c);
    if (!w && create) {
      w = new UsageWindow(c, SEVEN_DAY_MS, this.sevenDay.limitTokens, 0, null);
      this.scoped.push(w);
    }
    return w;
  }

  /**
   * Windows that refuse a request for `family` now: rejected 5h/7d windows (account-wide),
   * else that family's rejected scoped window. Null when the request may be served.
   */
  rejection(family: string | null): { windows: UsageWindow[]; scopedOnly: boolean } | null {
    const main = [this.fiveHour, this.sevenDay].filter((w) => w.status === 'rejected');
    if (main.length > 0) return { windows: main, scopedOnly: false };
    const s = family ? this.scoped.find((w) => w.name === `7d_${family}`) : undefined;
    if (s && s.status === 'rejected') return { windows: [s], scopedOnly: true };
    return null;
  }

  /** Count a served answer in the windows (`chargedTokens`); the scoped window only for its family. */
  charge(usage: SimUsage, family: string | null): void {
    const t = chargedTokens(usage);
    this.fiveHour.add(t);
    this.sevenDay.add(t);
    const s = family ? this.scoped.find((w) => w.name === `7d_${family}`) : undefined;
    if (s) s.add(t);
    this.served += 1;
    this.cacheReadTokens += usage.cache_read_input_tokens;
    this.cacheCreationTokens += usage.cache_creation_input_tokens;
  }

  /**
   * Fault: the window named `name` (any spelling {@link window} takes) is rejected until `resetInMs` (ms) after `nowMs` (epoch ms).
   * @throws for an API-key account (it has no windows) or a name that is not a window's
   */
  exhaust(name: string, nowMs: number, resetInMs: number, perWindowOnly: boolean): void {
    if (this.apiKey) throw new Error('exhaust does not apply to an apiKey account (no windows); use throttle');
    const w = this.window(name, true);
    if (!w) throw new Error(`unknown window ${JSON.stringify(name)}; use 5h, 7d or 7d_<family>`);
    w.exhaust(nowMs, resetInMs, perWindowOnly);
  }

  /** Lift every fault-made window exhaustion. */
  liftExhaustion(): void {
    for (const w of this.all()) w.lift();
  }
}
