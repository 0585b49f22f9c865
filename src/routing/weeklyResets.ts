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

interface WindowSeen {
  resetAtMs: number;
  used: number;
}

/** Collects weekly-window observations in any order; `resets(endMs)` lists the windows that reset by `endMs`. */
export class WeeklyResetTracker {
  private readonly windows = new Map<string, WindowSeen[]>();

  /**
   * One observation of `account`'s weekly window.
   * @param used utilisation, fraction (null: not reported — ignored)
   * @param resetAtMs the window's reset, epoch ms (null: not ticking — ignored)
   */
  observe(account: string, used: number | null, resetAtMs: number | null): void {
    if (used === null || resetAtMs === null || !Number.isFinite(used) || !Number.isFinite(resetAtMs)) return;
    let list = this.windows.get(account);
    if (!list) this.windows.set(account, (list = []));
    // Newest windows last: a log is read roughly in time order, so the match is found at once.
    for (let i = list.length - 1; i >= 0; i--) {
      const w = list[i];
      if (Math.abs(w.resetAtMs - resetAtMs) < RESET_JITTER_MS) {
        if (used > w.used) w.used = used;
        return;
      }
    }
    list.push({ resetAtMs, used });
  }

  /** The windows whose reset lies at or before `endMs` (epoch ms: the log's last decision). */
  resets(endMs: number): WeeklyReset[] {
    const out: WeeklyReset[] = [];
    for (const [account, list] of this.windows) {
      for (const w of list) {
        if (w.resetAtMs > endMs) continue;
        const usedFraction = Math.min(1, Math.max(0, w.used));
        out.push({ account, resetAtMs: w.resetAtMs, usedFraction, unusedFraction: 1 - usedFraction });
      }
    }
    return out;
  }
}
