/**
 * The world the simulator replays against: per account, the fake upstream's own windows and
 * prompt cache (src/sim/windows.ts, src/sim/promptCache.ts) on a virtual clock, plus the router's
 * state the planner reads (cooldown, in-flight leases). Pure: time is always an argument (epoch ms).
 */
import { mergeCooldown } from '../quota/cooldown';
import type { TokensByKind } from '../quota/learnedCosts';
import type { Cooldown, QuotaSnapshot, QuotaWindow } from '../quota/types';
import type { UsageRecord } from '../routing/decision';
import type { WeeklyReset } from '../routing/weeklyResets';
import { PromptCache } from '../sim/promptCache';
import { chargedTokens, FIVE_HOUR_MS, SEVEN_DAY_MS, UsageWindow, windowStatus, worseStatus, type WindowStatus } from '../sim/windows';
import type { TransientFault, WorkloadAccount } from './workload';

/** One account of the simulated pool. */
export class WorldAccount {
  readonly label: string;
  readonly fallback: boolean;
  /** The fake upstream's windows (none for a fallback: a pay-as-you-go key has no windows). */
  readonly fiveHour: UsageWindow | undefined;
  readonly sevenDay: UsageWindow | undefined;
  readonly cache: PromptCache;
  private cooldown: Cooldown | undefined;
  /** Cooldowns set by answers still to come (a throttle's 429 arrives a little after its request). */
  private pendingCooldowns: Cooldown[] = [];
  /** `/v1/messages` requests in flight on it (leases). */
  inflight = 0;
  /** Their cost reservations, tokens by kind (src/whatif/leases.ts). */
  readonly reserved: TokensByKind = { inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0 };
  private readonly schedule: readonly number[];
  private nextScheduled = 0;
  private readonly faults: TransientFault[];
  private nextFault = 0;
  /** Tokens counted in the windows whose answer's head (and quota headers) has not reached the router yet. */
  private unseen: Array<{ visibleAtMs: number; tokens: number }> = [];

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
    // Unseen tokens belong to the window they were counted in.
    if (this.fiveHour.resetAtMs !== null && nowMs >= this.fiveHour.resetAtMs) this.unseen = [];
    this.fiveHour.roll(nowMs);
    while (w.resetAtMs !== null && nowMs >= w.resetAtMs) {
      const resetAtMs = w.resetAtMs;
      const usedFraction = Math.min(1, w.utilization);
      onWeeklyReset({ account: this.label, resetAtMs, usedFraction, unusedFraction: 1 - usedFraction, unusedTokens: Math.max(0, w.limitTokens - w.usedTokens) });
      w.roll(nowMs);
      this.unseen = [];
      while (this.nextScheduled < this.schedule.length && this.schedule[this.nextScheduled] <= resetAtMs) this.nextScheduled++;
      if (this.nextScheduled < this.schedule.length) w.resetAtMs = this.schedule[this.nextScheduled++];
    }
  }

  /**
   * The quota evidence the router holds at `nowMs`: the windows as the latest answer heads showed
   * them — without the tokens of answers whose head has not arrived — kept fresh (as the usage
   * poller keeps it).
   */
  quota(nowMs: number): QuotaSnapshot | undefined {
    if (!this.fiveHour || !this.sevenDay) return undefined;
    let hidden = 0;
    if (this.unseen.length > 0) {
      this.unseen = this.unseen.filter((u) => u.visibleAtMs > nowMs);
      for (const u of this.unseen) hidden += u.tokens;
    }
    const session = windowEvidence(this.fiveHour, hidden);
    const weekly = windowEvidence(this.sevenDay, hidden);
    return { observedAtMs: nowMs, source: 'headers', unifiedStatus: worseStatus(session.status as WindowStatus, weekly.status as WindowStatus), session, weekly, scoped: {} };
  }

  /** The account's cooldown at `nowMs` (those set by answers that have arrived by then). */
  cooldownAt(nowMs: number): Cooldown | undefined {
    if (this.pendingCooldowns.length > 0) {
      const due = this.pendingCooldowns.filter((c) => c.setAtMs <= nowMs);
      if (due.length > 0) {
        this.pendingCooldowns = this.pendingCooldowns.filter((c) => c.setAtMs > nowMs);
        for (const c of due) this.cooldown = mergeCooldown(this.cooldown, c);
      }
    }
    return this.cooldown;
  }

  /** Sets `cooldown` from its `setAtMs` on (merged as the router merges cooldowns: one never shortens). */
  coolDown(cooldown: Cooldown): void {
    this.pendingCooldowns.push(cooldown);
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
  takeFault(nowMs: number, requestId: string): TransientFault | undefined {
    while (this.nextFault < this.faults.length) {
      const f = this.faults[this.nextFault];
      if (nowMs < f.atMs) return undefined;
      // In the millisecond it struck, it strikes the request that met it (others arrived with it).
      if (nowMs === f.atMs && f.requestId !== undefined && f.requestId !== requestId) return undefined;
      this.nextFault++;
      if (nowMs < f.atMs + f.answerMs + Math.max(1, f.cooldownMs)) return f;
    }
    return undefined;
  }

  /**
   * Serves a request at `nowMs`: the prompt cache says what is read and what is written, the
   * windows count it (`chargedTokens`), the prefix is cached.
   * @param visibleAtMs when its answer's head reaches the router (epoch ms): the router sees its tokens from then
   * @returns the usage the account reports
   */
  serve(session: string | null, promptTokens: number, tailTokens: number, outputTokens: number, nowMs: number, visibleAtMs: number): UsageRecord {
    const u = this.cache.plan(session, promptTokens, tailTokens, nowMs);
    if (this.fiveHour && this.sevenDay) {
      const tokens = chargedTokens({
        input_tokens: u.input_tokens,
        cache_creation_input_tokens: u.cache_creation_input_tokens,
        cache_read_input_tokens: u.cache_read_input_tokens,
        output_tokens: outputTokens,
      });
      this.fiveHour.start(nowMs);
      this.sevenDay.start(nowMs);
      this.fiveHour.add(tokens);
      this.sevenDay.add(tokens);
      if (visibleAtMs > nowMs) this.unseen.push({ visibleAtMs, tokens });
    }
    this.cache.commit(session, promptTokens, nowMs);
    return { inputTokens: u.input_tokens, outputTokens, cacheCreationInputTokens: u.cache_creation_input_tokens, cacheReadInputTokens: u.cache_read_input_tokens };
  }
}

/** A window as its headers report it, `hidden` tokens not yet seen: status, utilisation, and its reset while it runs. */
function windowEvidence(w: UsageWindow, hidden: number): QuotaWindow {
  const utilization = hidden > 0 ? Math.max(0, w.usedTokens - hidden) / w.limitTokens : w.utilization;
  const status = windowStatus(utilization);
  return w.resetAtMs === null ? { status, utilization } : { status, utilization, resetAtMs: w.resetAtMs };
}
