import { strict as assert } from 'node:assert';
import { parseConfigText, type LoadResult } from '../../src/config/load';
import { policyFrom } from '../../src/config/schema';
import { policyFromSettings } from '../../src/config/settingsPolicy';

function err(r: LoadResult): string {
  assert.equal(r.ok, false);
  return (r as { error: string }).error;
}

describe('limit warm-up keys', () => {
  it('reads accounts[].warm-up and routing.warm-up-model from YAML; off by default with a small default model', () => {
    const r = parseConfigText('routing:\n  warm-up-model: claude-haiku-4-5-20251001\naccounts:\n  - label: a\n    warm-up: true\n  - label: b\n');
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.config.accounts?.[0].warmUp, true);
    assert.equal(r.config.accounts?.[1].warmUp, undefined);
    assert.equal(policyFrom(r.config.routing).warmUpModel, 'claude-haiku-4-5-20251001');
    assert.equal(policyFrom(undefined).warmUpModel, 'claude-haiku-4-5');
  });

  it('names the key and the reason of an invalid value, in YAML and in settings', () => {
    assert.match(err(parseConfigText('accounts:\n  - label: a\n    warm-up: yes please\n')), /accounts\.0\.warm-up: /);
    assert.match(err(parseConfigText('routing:\n  warm-up-model: Claude Haiku\n')), /routing\.warm-up-model: must be a model id such as claude-haiku-4-5/);
    const bad = policyFromSettings({ warmUpModel: '' }, undefined, {});
    assert.equal(bad.ok, false);
    assert.match((bad as { error: string }).error, /claudeRouter\.routing\.warmUpModel: must be a model id/);
  });
});
