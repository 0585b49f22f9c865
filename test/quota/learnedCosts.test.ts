import { strict as assert } from 'node:assert';
import { DEFAULT_WINDOW_TOKENS, expectedCostPerToken, LearnedCosts, weightedTokens, type TokensByKind } from '../../src/quota/learnedCosts';
import { seededRandom } from '../../src/routing/planner/random';
import type { QuotaSnapshot } from '../../src/quota/types';

const T0 = Date.UTC(2025, 5, 2, 8);
const HOUR = 3_600_000;

/**
 * A synthetic account: `fiveHourTokens` weighted tokens fill its 5-hour window, `sevenDayTokens` its
 * week. Its headers show utilisation rounded to whole percent, as of the request before (the
 * answer's own tokens are not in its own headers).
 */
class SyntheticAccount {
  used5 = 0;
  used7 = 0.2;
  reset5: number;
  constructor(
    readonly fiveHourTokens: number,
    readonly sevenDayTokens: number,
    now: number,
  ) {
    this.reset5 = now + 5 * HOUR;
  }
  snapshot(now: number): QuotaSnapshot {
    if (now >= this.reset5) {
      this.used5 = 0;
      this.reset5 = now + 5 * HOUR;
    }
    const round = (f: number) => Math.round(f * 100) / 100;
    return {
      observedAtMs: now,
      source: 'headers',
      session: { utilization: round(this.used5), resetAtMs: this.reset5 },
      weekly: { utilization: round(this.used7), resetAtMs: T0 + 6 * 24 * HOUR },
      scoped: {},
    };
  }
  serve(t: TokensByKind): void {
    this.used5 += weightedTokens(t) / this.fiveHourTokens;
    this.used7 += weightedTokens(t) / this.sevenDayTokens;
  }
}

/** Runs `turns` requests of varied size and kind through the account and the learner, 20 s apart. */
function run(learner: LearnedCosts, acct: SyntheticAccount, turns: number, seed = 1, from = T0): number {
  const rand = seededRandom(seed);
  let t = from;
  for (let i = 0; i < turns; i++) {
    learner.observe('a', acct.snapshot(t));
    const tokens = {
      inputTokens: 500 + rand() * 3_000,
      cacheReadTokens: rand() * 80_000,
      cacheWriteTokens: rand() < 0.2 ? rand() * 20_000 : 0,
      outputTokens: 100 + rand() * 2_000,
    };
    acct.serve(tokens);
    learner.served('a', tokens, 'sonnet');
    t += 20_000;
  }
  return t;
}

describe('quota/learnedCosts: learned window consumption', () => {
  it("converges on a synthetic account's cost per token in each window, from rounded headers that lag one answer", () => {
    const learner = new LearnedCosts();
    const acct = new SyntheticAccount(1_500_000, 40_000_000, T0);
    run(learner, acct, 2_000);
    const five = learner.window('a', '5h')!;
    const week = learner.window('a', '7d')!;
    assert.ok(Math.abs(five.fractionPerToken * 1_500_000 - 1) < 0.05, `5h: ${1 / five.fractionPerToken} tokens per window`);
    assert.ok(Math.abs(week.fractionPerToken * 40_000_000 - 1) < 0.05, `7d: ${1 / week.fractionPerToken} tokens per window`);
    assert.ok(five.confidence > 0.8 && week.confidence > 0.8, `confidence ${five.confidence}, ${week.confidence}`);
    // Two accounts on different plans: the same percentage is a different amount of work.
    assert.ok(five.fractionPerToken / week.fractionPerToken > 20);
  });

  it('is unsure early: before evidence the cautious default applies, and a few samples move it only part of the way', () => {
    const learner = new LearnedCosts();
    assert.equal(expectedCostPerToken(learner.costs('a')?.fiveHour, '5h'), 1 / DEFAULT_WINDOW_TOKENS['5h']);
    const acct = new SyntheticAccount(4_000_000, 40_000_000, T0);
    run(learner, acct, 12);
    const early = learner.window('a', '5h')!;
    assert.ok(early.samples >= 1 && early.confidence < 0.6, `after ${early.samples} samples: confidence ${early.confidence}`);
    const blended = expectedCostPerToken(early, '5h');
    assert.ok(blended > early.fractionPerToken, 'the blend stays on the cautious side of the estimate (a smaller allowance)');
  });

  it('a window reset between two snapshots discards that pair: the tokens across it teach nothing', () => {
    const learner = new LearnedCosts();
    const acct = new SyntheticAccount(1_000_000, 40_000_000, T0);
    const t = run(learner, acct, 400);
    const before = learner.window('a', '5h')!;
    // A burst served, then the window resets before the next snapshot: its rise is never seen.
    for (let i = 0; i < 20; i++) learner.served('a', { inputTokens: 50_000, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0 }, 'sonnet');
    acct.reset5 = t;
    run(learner, acct, 400, 2, t);
    const after = learner.window('a', '5h')!;
    assert.ok(Math.abs(after.fractionPerToken * 1_000_000 - 1) < 0.05, `${1 / after.fractionPerToken} (before the reset: ${1 / before.fractionPerToken})`);
  });

  it('persists and reloads: the saved shape survives JSON, and a malformed window is skipped', () => {
    const learner = new LearnedCosts();
    run(learner, new SyntheticAccount(1_500_000, 40_000_000, T0), 600);
    const saved = JSON.parse(JSON.stringify(learner.toSaved())) as Record<string, Record<string, unknown>>;
    saved.a['scoped:opus'] = { n: 'many' };
    const reloaded = new LearnedCosts();
    reloaded.load(saved);
    assert.deepEqual(reloaded.costs('a'), learner.costs('a'));
    assert.equal(reloaded.window('a', 'scoped:opus'), undefined);
  });
});
