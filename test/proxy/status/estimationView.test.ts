/**
 * The cost leases' report in words, as `claude-router estimation` prints it and the status panel
 * shows it: whether each model is predicted and why not, and each account's reservations.
 */
import { strict as assert } from 'node:assert';
import { buildPanelData } from '../../../src/proxy/status/panelData';
import type { EstimationReport } from '../../../src/proxy/status/estimation';
import { estimationLines } from '../../../src/proxy/status/estimationView';
import type { StatusReport } from '../../../src/proxy/status/status';
import { DEFAULT_POLICY } from '../../../src/routing/policy';

const REPORT: EstimationReport = {
  margin: 1.15,
  quantile: 0.95,
  minSamples: 20,
  maxUndershootRate: 0.1,
  models: [
    { model: 'claude-sonnet-4-5', state: 'predicting', samples: 200, quantileTokens: 420, leaseTokens: 483, undershootRate: 0.04, checked: 100 },
    { model: 'claude-opus-4-1', state: 'warming_up', samples: 12, quantileTokens: null, leaseTokens: null, undershootRate: 0, checked: 0 },
    { model: 'claude-haiku-4-5', state: 'undershoot', samples: 60, quantileTokens: 300, leaseTokens: null, undershootRate: 0.14, checked: 40 },
  ],
  accounts: [
    { account: 'work', inflight: 2, reserved: { inputTokens: 0, cacheReadTokens: 18_000, cacheWriteTokens: 2_000, outputTokens: 2_048 } },
    { account: 'personal', inflight: 0, reserved: { inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0 } },
  ],
};

describe('status: the cost leases in words', () => {
  it('says per model whether it is predicted, at what p95 and lease, or why max_tokens is leased; per account what is reserved', () => {
    assert.deepEqual(estimationLines(REPORT), [
      "Output estimate: the p95 of each model's complete answers × 1.15, never above a request's max_tokens; max_tokens until 20 samples, and while more than 10 % beat it.",
      '  claude-sonnet-4-5  predicting · p95 420 tokens, leases 483 · 200 samples · 4 % beat it (of 100)',
      '  claude-opus-4-1    warming up · 12 of 20 samples · leases max_tokens',
      '  claude-haiku-4-5   undershoot · p95 300 tokens · 14 % beat it (of 40) · leases max_tokens until it recovers',
      'Reserved by the requests in flight (estimated tokens):',
      '  work      2 in flight · input 0 · cache read 18,000 · cache write 2,000 · output 2,048',
      '  personal  nothing reserved',
    ]);
  });

  it('the panel shows the same words, a row per model and per account; nothing from a leader that does not report it', () => {
    const base = {
      now: 0,
      decisions: [],
      error: undefined,
      role: 'leader',
      simulated: false,
      settingsError: null,
      previewModel: null,
      range: 'hour' as const,
      history: [],
      browser: { records: [], next: null, loading: false, error: null },
    };
    const status = {
      accounts: [],
      sessions: [],
      policy: DEFAULT_POLICY,
      config: { generation: 1, loadedAt: '', lastReloadError: null, lastReloadErrorAt: null, sources: {} },
      estimation: REPORT,
    } as unknown as StatusReport;
    const e = buildPanelData({ ...base, status }).estimation!;
    assert.deepEqual(e.models[1], ['claude-opus-4-1', 'warming up · 12 of 20 samples · leases max_tokens']);
    assert.deepEqual(e.accounts, [
      ['work', '2 in flight · input 0 · cache read 18,000 · cache write 2,000 · output 2,048'],
      ['personal', 'nothing reserved'],
    ]);
    assert.equal(buildPanelData({ ...base, status: { ...status, estimation: undefined } }).estimation, null);
  });
});
