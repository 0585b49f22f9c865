/**
 * Each account's allowance — the tokens that fill a window — inferred from how its recorded
 * utilisation moved against the tokens it served (docs/whatif.md#allowances):
 *
 *   allowance = Σ_p T_p / Σ_p Δu_p
 *
 * over the account's window periods p (one reset time each) with two or more observations, where
 * Δu_p is the utilisation's rise from the period's first observation to its last and T_p the
 * tokens the account served whose answers arrived in between, each counted as the world model
 * counts it (`chargedTokens`: input + cache creation + output + 0.1 × cache read, the router's
 * `weightedTokens`). Pure.
 */
import { addSample, emptyWindowCost, learnedCost } from '../quota/learnedCosts';
import type { WindowPeriod } from '../routing/weeklyResets';

/** Tokens an account served, by the time the answer's quota evidence arrived. */
export class ServedTokens {
  private events: Array<{ atMs: number; tokens: number }> = [];
  private times: Float64Array | undefined;
  private prefix: Float64Array | undefined;

  /** Tokens served whose answer (and its quota headers) arrived at `atMs` (epoch ms). */
  add(atMs: number, tokens: number): void {
    this.events.push({ atMs, tokens });
    this.times = undefined;
  }

  /**
   * Tokens served with an answer in [fromMs, toMs): evidence observed at `toMs` (a decision planned
   * then) shows what arrived before it, and evidence observed at `fromMs` did not yet.
   */
  between(fromMs: number, toMs: number): number {
    if (!this.times || !this.prefix) this.index();
    return this.before(toMs) - this.before(fromMs);
  }

  private index(): void {
    this.events.sort((a, b) => a.atMs - b.atMs);
    this.times = new Float64Array(this.events.length);
    this.prefix = new Float64Array(this.events.length + 1);
    for (let i = 0; i < this.events.length; i++) {
      this.times[i] = this.events[i].atMs;
      this.prefix[i + 1] = this.prefix[i] + this.events[i].tokens;
    }
  }

  /** Tokens with an answer before `t`. */
  private before(t: number): number {
    const times = this.times!;
    let lo = 0;
    let hi = times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (times[mid] < t) lo = mid + 1;
      else hi = mid;
    }
    return this.prefix![lo];
  }
}

/** An inferred allowance. */
export interface InferredAllowance {
  /** Tokens that fill the window. */
  tokens: number;
  /** Periods that contributed. */
  periods: number;
}

/** Below this total rise (fraction) the utilisation's movement is rounding, not evidence. */
const MIN_TOTAL_RISE = 0.001;

/**
 * The allowance of one window of one account, or null when the log cannot tell (no period with a
 * rise and served tokens: the account served nothing, or its utilisation was never seen twice).
 * The estimator is the router's own (src/quota/learnedCosts.ts), fed one sample per period and not
 * decayed (a log is read whole): allowance = 1 ÷ its fraction of the window per token.
 */
export function inferAllowance(periods: readonly WindowPeriod[], served: ServedTokens): InferredAllowance | null {
  const s = emptyWindowCost();
  for (const p of periods) {
    if (!(p.last.atMs > p.first.atMs)) continue;
    const t = served.between(p.first.atMs, p.last.atMs);
    const du = p.last.used - p.first.used;
    // A fall within one window is not use (a misread reset); nothing served and no rise says nothing.
    if (du < 0 || (t <= 0 && du <= 0)) continue;
    addSample(s, du, t, 1);
  }
  const learned = s.sumRise < MIN_TOTAL_RISE ? undefined : learnedCost(s);
  if (!learned) return null;
  return { tokens: 1 / learned.fractionPerToken, periods: s.n };
}
