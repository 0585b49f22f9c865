/**
 * "Claude Router: Compare Routing Policies on My Traffic" in the real extension host: the
 * simulation of a recorded log (in its child process) shown as a table and a chart, and "Use this
 * policy" writing the setting.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ClaudeRouterApi } from '../../../src/vscode/extension';
import type { ComparePoliciesResult } from '../../../src/vscode/comparePolicies';
import { DEFAULT_POLICY } from '../../../src/routing/policy';
import { STRATEGY_NAMES } from '../../../src/routing/planner/strategies/registry';
import { generateWorkload, WEEK_SHAPE } from '../../../src/whatif/generate';
import { writeGeneratedLog } from '../../support/generatedLog';

const routing = () => vscode.workspace.getConfiguration('claudeRouter.routing');

describe('Compare Routing Policies on My Traffic', function () {
  this.timeout(60_000);

  it('shows each policy of the catalogue beside the recorded log, and "Use this policy" writes the setting', async () => {
    await vscode.extensions.getExtension<ClaudeRouterApi>('claude-account-router.claude-account-router')!.activate();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'compare-policies-'));
    const log = path.join(dir, 'decisions.jsonl');
    writeGeneratedLog(log, generateWorkload({ ...WEEK_SHAPE, days: 2 }), { ...DEFAULT_POLICY, sessionAffinity: true });
    try {
      const r = await vscode.commands.executeCommand<ComparePoliciesResult | undefined>('claudeRouter.comparePolicies', [log], 'fill-first:headroom-first');
      assert.ok(r, 'the comparison ran');
      assert.equal(r.output.policies.length, STRATEGY_NAMES.length + 1);
      assert.ok(r.output.calibration.ok);
      assert.match(r.html, /<th scope="row"[^>]*>actual \(the log\)<\/th>/);
      assert.match(r.html, /<tr class="recorded"><th scope="row"[^>]*>\* fill-first:expiry-first<\/th>/);
      for (const name of ['fill-first:headroom-first', 'round-robin', 'weighted']) assert.match(r.html, new RegExp(`<button data-use="${name}">Use this policy</button>`));
      for (const chart of ['Mid-session switches', 'Cache-creation tokens', 'Refused requests', 'Unused at weekly resets'])
        assert.match(r.html, new RegExp(`<figcaption>${chart}`));
      assert.deepEqual(r.used, { written: true, strategy: 'fill-first', accountRanking: 'headroom-first' });
      assert.equal(routing().inspect('accountRanking')?.globalValue, 'headroom-first');
    } finally {
      await routing().update('strategy', undefined, vscode.ConfigurationTarget.Global);
      await routing().update('accountRanking', undefined, vscode.ConfigurationTarget.Global);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
