import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import type { DecisionRecord } from '../../src/routing/decision';
import { readDecisionLogs } from '../../src/cli/logCommands';
import { replayDecisions } from '../../src/routing/replay';
import { CASES } from '../support/branchFixture';

const ROOT = path.resolve(__dirname, '../../..');
const FIXTURE = path.join(ROOT, 'test/fixtures/ranking-branches.jsonl');

const EXPIRY_FIRST_REASONS = [
  'single_account',
  'availability',
  'cooldown_recovery',
  'insertion_order',
  'quota_evidence',
  'session_headroom',
  'scoped_headroom',
  'weekly_reset',
  'session_reset',
  'scoped_utilization',
  'weekly_utilization',
  'configured_primary',
];
const HEADROOM_FIRST_REASONS = [
  'single_account',
  'availability',
  'cooldown_recovery',
  'insertion_order',
  'quota_evidence',
  'session_headroom',
  'scoped_headroom',
  'headroom',
  'weekly_reset',
  'configured_primary',
];

describe('replay: the committed branch fixture (default equivalence)', () => {
  let records: DecisionRecord[];
  let badLines: number;
  before(async () => ({ records, badLines } = await readDecisionLogs([FIXTURE])));

  it('holds one recorded decision for every comparator branch of both rankings', () => {
    assert.equal(badLines, 0);
    assert.equal(records.length, CASES.length);
    const reasons = (ranking: string) => new Set(records.filter((r) => r.ranking === ranking).map((r) => r.selectionReason));
    for (const r of EXPIRY_FIRST_REASONS) assert.ok(reasons('expiry-first').has(r as never), `expiry-first fixture lacks ${r}`);
    for (const r of HEADROOM_FIRST_REASONS) assert.ok(reasons('headroom-first').has(r as never), `headroom-first fixture lacks ${r}`);
  });

  it('replays every expiry-first decision to the recorded order: zero differences', () => {
    const result = replayDecisions(records, 'expiry-first');
    assert.equal(result.compared, records.filter((r) => r.ranking === 'expiry-first').length);
    assert.deepEqual(result.differences, []);
  });

  it('replays every headroom-first decision to the recorded order', () => {
    assert.deepEqual(replayDecisions(records, 'headroom-first').differences, []);
  });

  it('reports differences when a what-if ranking orders the same candidates differently', () => {
    const whatIf = replayDecisions(records, 'headroom-first', true);
    assert.ok(whatIf.differences.length > 0, 'headroom-first reorders some expiry-first decisions');
  });

  it('the built CLI prints "differences: 0" and exits 0 on the fixture', () => {
    const out = execFileSync(process.execPath, [path.join(ROOT, 'dist/cli.js'), 'replay', FIXTURE, '--ranking', 'expiry-first'], { encoding: 'utf8' });
    assert.match(out, /differences: 0\n$/);
  });

  it('the built CLI exits 1 and lists the decisions when orders differ', () => {
    let code = 0;
    let out = '';
    try {
      execFileSync(process.execPath, [path.join(ROOT, 'dist/cli.js'), 'replay', FIXTURE, '--ranking', 'headroom-first', '--all'], { encoding: 'utf8' });
    } catch (err) {
      code = (err as { status: number }).status;
      out = (err as { stdout: string }).stdout;
    }
    assert.equal(code, 1);
    assert.match(out, /recorded .* \| replayed /);
    assert.match(out, /differences: [1-9]\d*\n$/);
  });
});
