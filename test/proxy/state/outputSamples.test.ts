import { strict as assert } from 'node:assert';
import { MAX_TRACKED_MODELS, OUTPUT_SAMPLE_WINDOW, OutputSamples } from '../../../src/proxy/state/outputSamples';
import { outputLeaseTokens } from '../../../src/routing/costEstimate';

const M = 'claude-sonnet-4-5';

/** Records `values` for model M. */
function feed(s: OutputSamples, values: number[]): void {
  for (const v of values) s.record(M, v);
}

describe('proxy/state OutputSamples: the adaptive output estimate', () => {
  it('leases max_tokens until the 20th answer, then the p95 of what the model really returned', () => {
    const s = new OutputSamples();
    feed(
      s,
      Array.from({ length: 19 }, (_, i) => (i + 1) * 10),
    );
    assert.equal(s.prediction(M).state, 'warming_up');
    assert.equal(outputLeaseTokens(s.prediction(M), 32_000, 1.15), 32_000);
    s.record(M, 200);
    assert.deepEqual(s.prediction(M), { state: 'predicting', quantileTokens: 190 });
    assert.equal(outputLeaseTokens(s.prediction(M), 32_000, 1.15), 219);
    assert.equal(s.prediction('claude-opus-4-1').state, 'warming_up', 'each model learns on its own');
    assert.equal(s.prediction(null).state, 'warming_up');
  });

  it('keeps the p95 of the newest 200 outputs: an old regime falls out', () => {
    const s = new OutputSamples();
    feed(
      s,
      Array.from({ length: 100 }, (_, i) => i + 1),
    );
    assert.equal(s.prediction(M).quantileTokens, 95);
    feed(s, Array(OUTPUT_SAMPLE_WINDOW).fill(1_000));
    assert.equal(s.prediction(M).quantileTokens, 1_000);
    assert.equal(s.estimates()[0].samples, OUTPUT_SAMPLE_WINDOW);
  });

  it('reads the p95 of exactly the newest 200 outputs, whatever their order (values kept sorted as they come and go)', () => {
    const s = new OutputSamples();
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31);
    const seen: number[] = [];
    for (let i = 1; i <= 1_000; i++) {
      // Repeats, zeros and a wide range: duplicates must leave the sorted values one for one.
      const v = next() % 3 === 0 ? 0 : next() % (i < 500 ? 50 : 5_000);
      seen.push(v);
      s.record(M, v);
      // The quantile in force is read every 10th answer from the 20th.
      if (i >= 20 && i % 10 === 0) {
        const window = seen.slice(-OUTPUT_SAMPLE_WINDOW).sort((a, b) => a - b);
        const p95 = window[Math.ceil(0.95 * window.length) - 1];
        assert.equal(s.estimates()[0].quantileTokens, p95, `after ${i} answers`);
      }
    }
  });

  it('falls back to max_tokens when the quantile is beaten more than twice as often as it should, and predicts again once it recovers', () => {
    const s = new OutputSamples();
    feed(s, Array(40).fill(100));
    assert.equal(s.prediction(M).state, 'predicting');
    // The distribution shifts: every answer is now far longer than the leased quantile.
    const seen: string[] = [];
    for (let i = 0; i < 30; i++) {
      s.record(M, 5_000);
      seen.push(s.prediction(M).state);
    }
    assert.ok(seen.includes('undershoot'), `the guard trips: ${seen.join(',')}`);
    assert.equal(outputLeaseTokens(s.prediction(M), 8_000, 1.15), 8_000, 'the ceiling is leased while it undershoots');
    const e = s.estimates()[0];
    assert.ok(e.undershootRate > 0.1, `undershoot rate ${e.undershootRate}`);
    // The long answers are now the sample's p95; steady answers let the rate fall back under 10 %.
    for (let i = 0; i < 200 && s.prediction(M).state !== 'predicting'; i++) s.record(M, 5_000);
    assert.equal(s.prediction(M).state, 'predicting');
    assert.equal(s.prediction(M).quantileTokens, 5_000);
  });

  it('does not count outputs within the quantile as undershoots', () => {
    const s = new OutputSamples();
    feed(
      s,
      Array.from({ length: 300 }, (_, i) => (i % 20) + 1),
    );
    const e = s.estimates()[0];
    assert.equal(e.state, 'predicting');
    assert.ok(e.undershootRate <= 0.1, `a steady distribution beats its p95 about 5 % of the time: ${e.undershootRate}`);
  });

  it(`tracks at most ${MAX_TRACKED_MODELS} models (names come from clients): the one seen first goes`, () => {
    const s = new OutputSamples();
    for (let i = 0; i <= MAX_TRACKED_MODELS; i++) s.record(`model-${i}`, 10);
    const models = s.estimates().map((e) => e.model);
    assert.equal(models.length, MAX_TRACKED_MODELS);
    assert.ok(!models.includes('model-0'));
    assert.ok(models.includes(`model-${MAX_TRACKED_MODELS}`));
  });
});
