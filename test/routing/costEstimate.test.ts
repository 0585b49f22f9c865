import { strict as assert } from 'node:assert';
import { estimateCost, MAX_UNDERSHOOT_RATE, MIN_OUTPUT_SAMPLES, outputLeaseTokens, predictionState, quantileOfSorted, UNKNOWN_MAX_TOKENS } from '../../src/routing/costEstimate';

describe('routing/costEstimate: a request’s estimated cost', () => {
  it('sizes input from the body (4 bytes a token) times the margin, split by where the prompt is cached', () => {
    // 40 000 bytes → 10 000 tokens → 11 500 with the default margin.
    assert.deepEqual(estimateCost(40_000, 'none', 500, 1.15), { inputTokens: 11_500, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 500 });
    assert.deepEqual(estimateCost(40_000, 'cold', 500, 1.15), { inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 11_500, outputTokens: 500 });
    assert.deepEqual(estimateCost(40_000, 'warm', 500, 1.15), { inputTokens: 0, cacheReadTokens: 10_350, cacheWriteTokens: 1_150, outputTokens: 500 });
  });

  it('leases the request’s max_tokens while its model is warming up or undershooting, whatever the quantile', () => {
    assert.equal(outputLeaseTokens({ state: 'warming_up', quantileTokens: null }, 32_000, 1.15), 32_000);
    assert.equal(outputLeaseTokens({ state: 'undershoot', quantileTokens: 400 }, 32_000, 1.15), 32_000);
    assert.equal(outputLeaseTokens({ state: 'warming_up', quantileTokens: null }, null, 1.15), UNKNOWN_MAX_TOKENS);
  });

  it('leases the quantile times the margin once predicting, never above max_tokens', () => {
    assert.equal(outputLeaseTokens({ state: 'predicting', quantileTokens: 400 }, 32_000, 1.15), 460);
    assert.equal(outputLeaseTokens({ state: 'predicting', quantileTokens: 400 }, 300, 1.15), 300, 'a small max_tokens caps it');
    assert.equal(outputLeaseTokens({ state: 'predicting', quantileTokens: 400 }, 460, 1.15), 460);
  });

  it('takes the nearest-rank quantile', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    assert.equal(quantileOfSorted(sorted, 100, 0.95), 95);
    assert.equal(quantileOfSorted(sorted, 20, 0.95), 19);
    assert.equal(quantileOfSorted([7], 1, 0.95), 7);
    assert.equal(quantileOfSorted([], 0, 0.95), 0);
  });

  it('predicts from the 20th sample on, and not while more than 10 % of checked outputs beat the quantile', () => {
    assert.equal(MIN_OUTPUT_SAMPLES, 20);
    assert.equal(predictionState(19, 0, 0), 'warming_up');
    assert.equal(predictionState(20, 0, 0), 'predicting');
    assert.ok(Math.abs(MAX_UNDERSHOOT_RATE - 0.1) < 1e-12);
    assert.equal(predictionState(100, 0.1, 100), 'predicting', 'at the limit it still predicts');
    assert.equal(predictionState(100, 0.11, 100), 'undershoot');
    assert.equal(predictionState(100, 0.5, 19), 'predicting', 'fewer than 20 checked outputs are not evidence yet');
  });
});
