import { strict as assert } from 'node:assert';
import { hostSettingsFrom, policyFromSettings, ROUTING_SETTING_KEYS } from '../../src/config/settingsPolicy';
import { DEFAULT_POLICY } from '../../src/routing/policy';

describe('VS Code settings → routing policy', () => {
  it('knows every routing key of the YAML schema as a setting', () => {
    for (const k of [
      'strategy',
      'accountRanking',
      'preferPrimary',
      'primaryAccount',
      'sessionAffinity',
      'sessionFingerprint',
      'sessionAffinityIdleTtlMs',
      'spillInflight',
      'maxInflightPerAccount',
      'sessionSoftLimit',
      'sessionResetToleranceMs',
      'allowOverage',
      'queueWaitMaxMs',
      'admissionRamp',
      'clientRetryHorizonMs',
      'grantWarnDays',
    ]) {
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

describe('VS Code host settings (port, upstream, token endpoint)', () => {
  it('unset or empty values give the defaults', () => {
    assert.deepEqual(hostSettingsFrom({ upstreamBaseUrl: '' }), {
      settings: { port: 48290, upstreamBaseUrl: 'https://api.anthropic.com', tokenUrl: 'https://platform.claude.com/v1/oauth/token' },
      error: null,
    });
  });

  it('takes valid values (without a trailing slash) and replaces an invalid one by its default, naming the setting', () => {
    const { settings, error } = hostSettingsFrom({ port: 'eighty', upstreamBaseUrl: 'http://127.0.0.1:9999/', tokenUrl: 'ftp://example.com/token' });
    assert.equal(settings.port, 48290);
    assert.equal(settings.upstreamBaseUrl, 'http://127.0.0.1:9999');
    assert.equal(settings.tokenUrl, 'https://platform.claude.com/v1/oauth/token');
    assert.match(error ?? '', /^claudeRouter\.port: .*\nclaudeRouter\.tokenUrl: must be an http\(s\) URL$/);
  });
});
