import { strict as assert } from 'node:assert';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { formatReport, type PolicyReport } from '../../src/routing/report';
import { DEFAULT_WORKLOAD, runWorkload, SUGGESTED_ROUTING } from '../support/workload';

/** The first few unsuccessful decisions of a log, in short (what CI, which keeps no artifacts, can show of a failure). */
function unsuccessful(logFile: string): string {
  const bad = readFileSync(logFile, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { outcome: string; status: number; attempts?: Array<{ account: string; result: string; ms: number }>; waits?: unknown[] })
    .filter((d) => d.outcome !== 'success');
  return JSON.stringify(
    bad.slice(0, 3).map((d) => ({ outcome: d.outcome, status: d.status, attempts: d.attempts?.map((a) => `${a.account}:${a.result}:${a.ms}`).join(' '), waits: d.waits })),
  );
}

describe('policy comparison on a simulated multi-session workload', function () {
  this.timeout(240_000);

  it("under transient throttles, a per-account concurrency limit and staggered quota the seed's suggested configuration, in either rebind mode, moves sessions only for quota — no ping-pong — and the default answers every request", async () => {
    const dir = path.resolve(__dirname, '../../../test-artifacts');
    mkdirSync(dir, { recursive: true });
    const log = (name: string) => path.join(dir, `policy-decisions-${name}.jsonl`);
    const reports: Record<string, PolicyReport> = {
      default: await runWorkload(undefined, DEFAULT_WORKLOAD, log('default')),
      suggested: await runWorkload(SUGGESTED_ROUTING, DEFAULT_WORKLOAD, log('suggested')),
      'suggested-on-quota': await runWorkload({ ...SUGGESTED_ROUTING, sessionAffinityRebind: 'on-quota' }, DEFAULT_WORKLOAD, log('suggested-on-quota')),
    };
    for (const [name, r] of Object.entries(reports)) writeFileSync(path.join(dir, `policy-report-${name}.txt`), formatReport(r));

    const baseline = reports.default;
    // No client error while an account could serve: one account always can in this workload.
    for (const [name, r] of Object.entries(reports)) assert.deepEqual(Object.keys(r.byOutcome), ['success'], `${name}: ${JSON.stringify(r.byOutcome)}; ${unsuccessful(log(name))}`);
    for (const name of ['suggested', 'suggested-on-quota']) {
      const r = reports[name];
      assert.equal(r.sessionRequests, baseline.sessionRequests, `${name}: the same workload served`);
      assert.equal(r.pingPongPairs, 0, `${name}: ping-pong`);
      assert.equal(r.unforcedSwitches, 0, `${name}: mid-session switches not forced by quota or sign-in`);
      assert.ok(r.midSessionSwitches > 0, `${name}: the staggered quota forces moves`);
      assert.ok(
        r.switchCacheCreationTokens < baseline.switchCacheCreationTokens,
        `${name}: switch cache writes ${r.switchCacheCreationTokens} vs ${baseline.switchCacheCreationTokens}`,
      );
      assert.ok((r.bySelectionReason.session_affinity ?? 0) > 0);
    }
    assert.ok(baseline.unforcedSwitches > 0, 'the throttles move sessions under the default');
  });
});
