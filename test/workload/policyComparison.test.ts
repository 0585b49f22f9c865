import { strict as assert } from 'node:assert';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { formatReport } from '../../src/routing/report';
import { runWorkload, SUGGESTED_ROUTING } from '../support/workload';

describe('policy comparison on a simulated multi-session workload', function () {
  this.timeout(120_000);

  it("the seed's suggested configuration switches, ping-pongs and re-writes the cache less than the default", async () => {
    const baseline = await runWorkload(undefined);
    const suggested = await runWorkload(SUGGESTED_ROUTING);
    const dir = path.resolve(__dirname, '../../../test-artifacts');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'policy-report-default.txt'), formatReport(baseline));
    writeFileSync(path.join(dir, 'policy-report-suggested.txt'), formatReport(suggested));

    assert.equal(baseline.sessionRequests, suggested.sessionRequests, 'same workload served under both policies');
    assert.ok(baseline.midSessionSwitches > 0, 'the workload provokes switches under the default');
    assert.ok(suggested.midSessionSwitches < baseline.midSessionSwitches, `switches ${suggested.midSessionSwitches} vs ${baseline.midSessionSwitches}`);
    assert.ok(suggested.pingPongPairs < baseline.pingPongPairs, `ping-pong ${suggested.pingPongPairs} vs ${baseline.pingPongPairs}`);
    assert.ok(
      suggested.switchCacheCreationTokens < baseline.switchCacheCreationTokens,
      `switch cache writes ${suggested.switchCacheCreationTokens} vs ${baseline.switchCacheCreationTokens}`,
    );
    assert.ok(suggested.cacheCreationTokens < baseline.cacheCreationTokens, 'less cache written overall');
    assert.ok((suggested.bySelectionReason.session_affinity ?? 0) > 0);
  });
});
