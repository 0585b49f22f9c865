import { strict as assert } from 'node:assert';
import { policyFromSettings, ROUTING_SETTING_KEYS } from '../../src/config/settingsPolicy';
import { DEFAULT_POLICY } from '../../src/routing/policy';

describe('VS Code settings → routing policy', () => {
  it('knows every routing key of the YAML schema as a setting', () => {
    for (const k of ['strategy', 'accountRanking', 'preferPrimary', 'primaryAccount', 'sessionAffinity', 'sessionAffinityIdleTtlMs', 'spillInflight', 'maxInflightPerAccount', 'sessionSoftLimit', 'sessionResetToleranceMs', 'allowOverage']) {
      assert.ok(ROUTING_SETTING_KEYS.includes(k as never), k);
    }
  });

  it('with nothing set gives exactly the default policy, every value from "default"', () => {
    const r = policyFromSettings({}, undefined, {});
    assert.ok(r.ok);
    assert.deepEqual({ ...r.policy }, { ...DEFAULT_POLICY });
    assert.ok(Object.values(r.sources).every((s) => s === 'default'));
  });

  it('names the setting and the reason for an invalid value', () => {
    const r = policyFromSettings({ spillInflight: 101, accountRanking: 'fastest' }, undefined, {});
    assert.equal(r.ok, false);
    const error = (r as { error: string }).error;
    assert.match(error, /claudeRouter\.routing\.spillInflight: .*100/);
    assert.match(error, /claudeRouter\.routing\.accountRanking/);
  });

  it('treats an empty primary as none, and lets a config file override settings, recording sources', () => {
    const r = policyFromSettings({ primaryAccount: '', sessionAffinity: true, spillInflight: 3 }, { path: '/x/proxy-config.yaml', routing: { spillInflight: 20 } }, {});
    assert.ok(r.ok);
    assert.equal(r.policy.primaryAccount, undefined);
    assert.equal(r.policy.spillInflight, 20);
    assert.equal(r.policy.sessionAffinity, true);
    assert.equal(r.sources['spill-inflight'], '/x/proxy-config.yaml');
    assert.equal(r.sources['session-affinity'], 'setting claudeRouter.routing.sessionAffinity');
    assert.equal(r.sources['account-ranking'], 'default');
  });
});
