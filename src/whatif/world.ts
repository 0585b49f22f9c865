/**
 * The world the simulator replays against: per account, the fake upstream's own windows and
 * prompt cache (src/sim/windows.ts, src/sim/promptCache.ts) on a virtual clock, plus the router's
 * state the planner reads (cooldown, in-flight leases). Pure: time is always an argument (epoch ms).
 */
import type { Cooldown, QuotaSnapshot, QuotaWindow } from '../quota/types';
import type { UsageRecord } from '../routing/decision';
import type { WeeklyReset } from '../routing/weeklyResets';
import { PromptCache } from '../sim/promptCache';
import { chargedTokens, FIVE_HOUR_MS, SEVEN_DAY_MS, UsageWindow, worseStatus } from '../sim/windows';
import type { TransientFault, WorkloadAccount } from './workload';

/** One account of the simulated pool. */
export class WorldAccount {
  readonly label: string;
  readonly fallback: boolean;
  /** The fake upstream's windows (none for a fallback: a pay-as-you-go key has no windows). */
  readonly fiveHour: UsageWindow | undefined;
  readonly sevenDay: UsageWindow | undefined;
  readonly cache: PromptCache;
  cooldown: Cooldown | undefined;
  /** `/v1/messages` requests in flight on it (leases). */
  inflight = 0;
  private readonly schedule: readonly number[];
  private nextScheduled = 0;
  private readonly faults: TransientFault[];
  private nextFault = 0;

  /**
   * @param spec the account as the workload holds it
   * @param cacheTtlMs prompt-cache lifetime after last use, ms
   * @param faults the transient faults of this account, in time order
   */
  constructor(spec: WorkloadAccount, cacheTtlMs: number, faults: TransientFault[]) {
    this.label = spec.label;
    this.fallback = spec.fallback;
    if (!spec.fallback) {
      this.fiveHour = new UsageWindow('5h', FIVE_HOUR_MS, spec.fiveHourLimitTokens, spec.fiveHour.used, spec.fiveHour.resetAtMs);
      this.sevenDay = new UsageWindow('7d', SEVEN_DAY_MS, spec.sevenDayLimitTokens, spec.sevenDay.used, spec.sevenDay.resetAtMs);
    }
    this.schedule = spec.weeklyResetSchedule;
    this.cache = new PromptCache(cacheTtlMs);
    this.faults = faults;
  }

  /**
   * Empties the windows whose reset passed by `nowMs`. A weekly window that resets is reported
   * with what it left unused, and the next one starts on the log's schedule when the log knows
   * it (else at the account's next served request, as the fake upstream starts it).
   */
  roll(nowMs: number, onWeeklyReset: (r: WeeklyReset) => void): void {
    const w = this.sevenDay;
    if (!w || !this.fiveHour) return;
    this.fiveHour.roll(nowMs);
    while (w.resetAtMs !== null && nowMs >= w.resetAtMs) {
      const resetAtMs = w.resetAtMs;
      const usedFraction = Math.min(1, w.utilization);
      onWeeklyReset({ account: this.label, resetAtMs, usedFraction, unusedFraction: 1 - usedFraction, unusedTokens: Math.max(0, w.limitTokens - w.usedTokens) });
      w.roll(nowMs);
      while (this.nextScheduled < this.schedule.length && this.schedule[this.nextScheduled] <= resetAtMs) this.nextScheduled++;
      if (this.nextScheduled < this.schedule.length) w.resetAtMs = this.schedule[this.nextScheduled++];
    }
  }

  /** The quota evidence the router holds at `nowMs`: the windows as they stand (the usage poller keeps it fresh). */
  quota(nowMs: number): QuotaSnapshot | undefined {
    if (!this.fiveHour || !this.sevenDay) return undefined;
    const session = windowEvidence(this.fiveHour);
    const weekly = windowEvidence(this.sevenDay);
    return { observedAtMs: nowMs, source: 'headers', unifiedStatus: worseStatus(this.fiveHour.status, this.sevenDay.status), session, weekly, scoped: {} };
  }

  /** A window would refuse a request now (the fake upstream's 429 for a full window). */
  refuses(): boolean {
    return this.fiveHour?.status === 'rejected' || this.sevenDay?.status === 'rejected';
  }

  /** The soonest reset of a refusing window, epoch ms (for the cooldown it sets). */
  refusalEndsAtMs(): number {
    let until = Infinity;
    for (const w of [this.fiveHour, this.sevenDay]) if (w?.status === 'rejected' && w.resetAtMs !== null) until = Math.min(until, w.resetAtMs);
    return until;
  }

  /**
   * The transient fault an attempt at `nowMs` meets, consumed, or undefined: a fault strikes the
   * first attempt on its account from its time until its cooldown would have ended.
   */
  takeFault(nowMs: number): TransientFault | undefined {
    while (this.nextFault < this.faults.length) {
      const f = this.faults[this.nextFault];
      if (nowMs < f.atMs) return undefined;
      this.nextFault++;
      if (nowMs < f.atMs + Math.max(1, f.cooldownMs)) return f;
    }
    return undefined;
  }

  /**
   * Serves a request at `nowMs`: the prompt cache says what is read and what is written, the
   * windows count it (`chargedTokens`), the prefix is cached.
   * @returns the usage the account reports
   */
  serve(session: string | null, promptTokens: number, tailTokens: number, outputTokens: number, nowMs: number): UsageRecord {
    const u = this.cache.plan(session, promptTokens, tailTokens, nowMs);
    if (this.fiveHour && this.sevenDay) {
      const tokens = chargedTokens({ ...u, output_tokens: outputTokens });
      this.fiveHour.start(nowMs);
      this.sevenDay.start(nowMs);
      this.fiveHour.add(tokens);
      this.sevenDay.add(tokens);
    }
    this.cache.commit(session, promptTokens, nowMs);
    return { inputTokens: u.input_tokens, outputTokens, cacheCreationInputTokens: u.cache_creation_input_tokens, cacheReadInputTokens: u.cache_read_input_tokens };
  }
}

/** A window as its headers report it: status, utilisation, and its reset while it runs. */
function windowEvidence(w: UsageWindow): QuotaWindow {
  return w.resetAtMs === null ? { status: w.status, utilization: w.utilization } : { status: w.status, utilization: w.utilization, resetAtMs: w.resetAtMs };
}
