/**
 * Weekly resets that expired with unused allowance (the design seed's last rollout metric), from
 * the quota evidence a decision log recorded: each candidate's `weeklyUsed` and `weeklyResetMs`.
 * Pure.
 *
 * A weekly window is one reset time per account (two resets closer than RESET_JITTER_MS are the
 * same window, docs/routing.md#merging); its use is the highest utilisation observed for it
 * (use only grows within a window). The window expired when the log goes on past its reset; what
 * it left unused is 1 − that use. The last observation may precede the reset by a while, so the
 * unused share is an upper bound: traffic after the last decision is not seen.
 *
 * `WindowPeriods` groups observations of any window into these periods; the what-if simulator
 * reads the 5-hour and weekly periods with it to infer allowances (docs/whatif.md#allowances).
 */
import { RESET_JITTER_MS } from '../quota/constants';

/** One weekly window that reset within a log. */
export interface WeeklyReset {
  account: string;
  /** When the window reset, epoch ms. */
  resetAtMs: number;
  /** Highest utilisation observed for the window, fraction 0–1 (capped at 1). */
  usedFraction: number;
  /** 1 − usedFraction: the share of the week's allowance that expired unused, fraction 0–1. */
  unusedFraction: number;
  /** The unused allowance in tokens, when the allowance is known (the what-if simulator knows it); absent otherwise. */
  unusedTokens?: number;
}

/** The report's summary of a list of weekly resets. */
export interface WeeklyResetSummary {
  /** Every weekly window that reset within the log, in reset order. */
  weeklyResets: WeeklyReset[];
  /** How many of them expired with some allowance unused. */
  weeklyResetsWithUnused: number;
  /** Sum of their unused fractions: account-weeks of allowance that expired unused (0.5 = half of one account's week). */
  unusedWeeklyAllowance: number;
}

/** The summary of `resets` (any order). */
export function summarizeWeeklyResets(resets: readonly WeeklyReset[]): WeeklyResetSummary {
  const sorted = [...resets].sort((a, b) => a.resetAtMs - b.resetAtMs || (a.account < b.account ? -1 : 1));
  let withUnused = 0;
  let unused = 0;
  for (const r of sorted) {
    if (r.unusedFraction > 0) withUnused++;
    unused += r.unusedFraction;
  }
  return { weeklyResets: sorted, weeklyResetsWithUnused: withUnused, unusedWeeklyAllowance: unused };
}

/** One observation of a window: when, and its utilisation (fraction). */
export interface WindowObservation {
  atMs: number;
  used: number;
}

/** One window of one account (one reset time) as the evidence showed it. */
export interface WindowPeriod {
  /** The window's reset, epoch ms (the first one seen; later ones within RESET_JITTER_MS are the same window). */
  resetAtMs: number;
  /** The earliest and the latest observation (by time). */
  first: WindowObservation;
  last: WindowObservation;
  /** The highest utilisation observed, fraction. */
  maxUsed: number;
}

/**
 * Observations of one kind of window (weekly, or 5-hour) of every account, grouped into periods
 * by their reset time. Observations may come in any order.
 */
export class WindowPeriods {
  private readonly byAccount = new Map<string, WindowPeriod[]>();

  /**
   * One observation of `account`'s window.
   * @param atMs when it was observed, epoch ms
   * @param used utilisation, fraction (null: not reported — ignored)
   * @param resetAtMs the window's reset, epoch ms (null: not ticking — ignored)
   */
  observe(account: string, atMs: number, used: number | null, resetAtMs: number | null): void {
    if (used === null || resetAtMs === null || !Number.isFinite(used) || !Number.isFinite(resetAtMs) || !Number.isFinite(atMs)) return;
    let list = this.byAccount.get(account);
    if (!list) this.byAccount.set(account, (list = []));
    // Newest windows last: a log is read roughly in time order, so the match is found at once.
    for (let i = list.length - 1; i >= 0; i--) {
      const p = list[i];
      if (Math.abs(p.resetAtMs - resetAtMs) < RESET_JITTER_MS) {
        if (used > p.maxUsed) p.maxUsed = used;
        if (atMs < p.first.atMs) p.first = { atMs, used };
        if (atMs >= p.last.atMs) p.last = { atMs, used };
        return;
      }
    }
    list.push({ resetAtMs, first: { atMs, used }, last: { atMs, used }, maxUsed: used });
  }

  /** The accounts observed. */
  accounts(): string[] {
    return [...this.byAccount.keys()];
  }

  /** `account`'s periods in reset order. */
  periods(account: string): WindowPeriod[] {
    return [...(this.byAccount.get(account) ?? [])].sort((a, b) => a.resetAtMs - b.resetAtMs);
  }

  /** The periods, as weekly windows, whose reset lies at or before `endMs` (epoch ms: the log's last decision). */
  resets(endMs: number): WeeklyReset[] {
    const out: WeeklyReset[] = [];
    for (const [account, list] of this.byAccount) {
      for (const p of list) {
        if (p.resetAtMs > endMs) continue;
        const usedFraction = Math.min(1, Math.max(0, p.maxUsed));
        out.push({ account, resetAtMs: p.resetAtMs, usedFraction, unusedFraction: 1 - usedFraction });
      }
    }
    return out;
  }
}
