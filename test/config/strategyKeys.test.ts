import { strict as assert } from 'node:assert';
import { parseConfigText, validateConfig, type LoadResult } from '../../src/config/load';
import { policyFrom } from '../../src/config/schema';
import { policyFromSettings, ROUTING_SETTING_KEYS } from '../../src/config/settingsPolicy';
import { STRATEGY_NAMES } from '../../src/routing/planner/strategies/registry';
import { weightsOf } from '../../src/routing/planner/strategies/weighted';

function ok(r: LoadResult) {
  assert.equal(r.ok, true, r.ok ? '' : r.error);
  return r.config;
}
function err(r: LoadResult): string {
  assert.equal(r.ok, false);
  return (r as { error: string }).error;
}
const routing = (key: string, value: unknown) => validateConfig({ routing: { [key]: value } });

describe('config: the strategy catalogue keys', () => {
  it('every catalogue strategy is a valid `strategy`; anything else is named with the key', () => {
    for (const s of STRATEGY_NAMES) ok(routing('strategy', s));
    assert.match(err(routing('strategy', 'random')), /^routing\.strategy: \S/);
  });

  const cases: [string, unknown[], unknown[]][] = [
    ['relative-availability-top-k', [1, 2, 100], [0, 101, 1.5, '2']],
    ['relative-availability-power', [0, 2, 0.5, 10], [-1, 10.5, '2']],
    ['single-account-label', ['work'], ['', 3]],
    ['weighted-preset', ['sticky-headroom', 'headroom', 'least-loaded', 'priority', 'cost-tiered'], ['cheapest', 1]],
  ];
  for (const [key, good, bad] of cases) {
    it(`${key}: accepts ${good.map((v) => JSON.stringify(v)).join(', ')}; rejects ${bad.map((v) => JSON.stringify(v)).join(', ')}`, () => {
      for (const v of good) ok(routing(key, v));
      for (const v of bad) assert.match(err(routing(key, v)), new RegExp(`^routing\\.${key}: \\S`), JSON.stringify(v));
    });
  }

  it('weights.* are fractions 0–1; a bad one is named with its path and reason; an unknown term is rejected', () => {
    ok(routing('weights', { affinity: 0, cost: 1 }));
    assert.match(err(routing('weights', { load: 1.5 })), /routing\.weights\.load: .*fraction from 0 to 1/);
    assert.match(err(routing('weights', { speed: 0.5 })), /routing\.weights.*speed/);
  });

  it('kebab-case YAML: the new keys, per-account priority, cost-tier and plan-size, and the effective policy', () => {
    const r = parseConfigText(
      [
        'accounts:',
        '  - label: cheap',
        '    cost-tier: 1',
        '    priority: 2',
        '  - label: dear',
        '    cost-tier: 3',
        '    plan-size: 20',
        'routing:',
        '  strategy: weighted',
        '  weighted-preset: cost-tiered',
        '  weights:',
        '    affinity: 0.4',
        '  relative-availability-top-k: 3',
      ].join('\n'),
    );
    const config = ok(r);
    assert.equal(config.accounts?.[0].costTier, 1);
    assert.equal(config.accounts?.[0].priority, 2);
    assert.equal(config.accounts?.[1].planSize, 20);
    assert.match(err(parseConfigText('accounts:\n  - label: a\n    plan-size: 0\n')), /accounts\.0\.plan-size: must be a positive number/);
    const policy = policyFrom(config.routing, {});
    assert.equal(policy.strategy, 'weighted');
    assert.equal(policy.relativeAvailabilityTopK, 3);
    assert.deepEqual(weightsOf(policy), { affinity: 0.4, headroom: 0, priority: 0, load: 0, errors: 0, cost: 0.8 });
    assert.match(err(parseConfigText('accounts:\n  - label: a\n    priority: 1.5\n')), /accounts\.0\.priority: \S/);
  });

  it('the settings know every new key; an empty pinned label means none; an invalid setting names itself', () => {
    for (const k of ['relativeAvailabilityTopK', 'relativeAvailabilityPower', 'singleAccountLabel', 'weightedPreset', 'weights'])
      assert.ok(ROUTING_SETTING_KEYS.includes(k as never), k);
    const r = policyFromSettings({ strategy: 'single-account', singleAccountLabel: '' }, undefined, {});
    assert.ok(r.ok);
    assert.equal(r.policy.singleAccountLabel, undefined);
    assert.equal(r.sources.strategy, 'setting claudeRouter.routing.strategy');
    const bad = policyFromSettings({ strategy: 'fastest' }, undefined, {});
    assert.ok(!bad.ok);
    assert.match(bad.error, /claudeRouter\.routing\.strategy/);
  });
});
