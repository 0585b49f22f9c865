/**
 * The strategy and ranking descriptions have one source: the strategy modules and
 * `ACCOUNT_RANKINGS`. package.json's enum and enum descriptions for the two settings (what the
 * Settings UI shows, through package.nls.json) and the Choose Routing Strategy quick pick read the same text.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { STRATEGIES, STRATEGY_NAMES } from '../../src/routing/planner/strategies/registry';
import { ACCOUNT_RANKINGS } from '../../src/routing/ranking';

interface EnumSetting {
  enum: string[];
  markdownEnumDescriptions: string[];
}

/** A setting of package.json with its texts as the Settings UI shows them (`%key%` looked up in package.nls.json). */
function setting(key: string): EnumSetting {
  // out/test/config → the repository root.
  const root = path.join(__dirname, '..', '..', '..');
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  const nls = JSON.parse(readFileSync(path.join(root, 'package.nls.json'), 'utf8')) as Record<string, string>;
  const text = (v: string) => (/^%.+%$/.test(v) ? nls[v.slice(1, -1)] : v);
  const config = pkg.contributes.configuration;
  const sections = (Array.isArray(config) ? config : [config]) as Array<{ properties: Record<string, EnumSetting> }>;
  const found = sections.map((s) => s.properties[key]).find(Boolean);
  assert.ok(found, key);
  return { enum: found.enum, markdownEnumDescriptions: found.markdownEnumDescriptions.map(text) };
}

describe('config: strategy and ranking descriptions in package.json', () => {
  it('claudeRouter.routing.strategy lists the registry in order, each with its module description', () => {
    const s = setting('claudeRouter.routing.strategy');
    assert.deepEqual(s.enum, STRATEGY_NAMES);
    assert.deepEqual(
      s.markdownEnumDescriptions,
      STRATEGY_NAMES.map((n) => STRATEGIES[n].description),
    );
    for (const n of STRATEGY_NAMES) assert.ok(!STRATEGIES[n].description.includes('\n'), n);
  });

  it('claudeRouter.routing.accountRanking lists ACCOUNT_RANKINGS in order with their text', () => {
    const s = setting('claudeRouter.routing.accountRanking');
    assert.deepEqual(s.enum, Object.keys(ACCOUNT_RANKINGS));
    assert.deepEqual(s.markdownEnumDescriptions, Object.values(ACCOUNT_RANKINGS));
  });
});
