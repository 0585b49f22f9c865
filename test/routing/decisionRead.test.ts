import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { readDecisionLogs } from '../../src/cli/logCommands';
import { readDecisionRecord } from '../../src/routing/decisionRead';
import { stickyKeyHash } from '../../src/routing/identify';
import { computeReport } from '../../src/routing/report';
import { recordedRequestClass } from '../../src/routing/requestClass';

const FIXTURE = path.resolve(__dirname, '../../../test/fixtures/ranking-branches.jsonl');

describe('reading decision records of schema version 1 and 2', () => {
  const v1Lines = readFileSync(FIXTURE, 'utf8').split('\n').filter(Boolean);

  it('a version 1 record is read as version 2: its raw session id hashed, the id itself gone', () => {
    const raw = JSON.parse(v1Lines[0]) as { schemaVersion: number; sessionId: string };
    assert.equal(raw.schemaVersion, 1, 'the committed fixture is version 1');
    const r = readDecisionRecord(raw)!;
    assert.equal(r.schemaVersion, 2);
    assert.equal(r.stickyKeyHash, stickyKeyHash(raw.sessionId));
    assert.equal(r.stickyKeySource, 'unknown');
    assert.equal(r.stickyKind, 'session');
    assert.ok(!JSON.stringify(r).includes(raw.sessionId), 'no raw id left in the record');
    const none = readDecisionRecord({ ...raw, sessionId: null })!;
    assert.deepEqual([none.stickyKeyHash, none.stickyKeySource, none.stickyKind], [null, 'none', 'none']);
  });

  it('a version 2 record is taken as it is; anything else is not a record', () => {
    const v2 = readDecisionRecord(JSON.parse(v1Lines[0]))!;
    assert.equal(readDecisionRecord(v2), v2);
    for (const bad of [null, 42, 'x', {}, { schemaVersion: 3, ts: 'x' }, { schemaVersion: 2 }]) assert.equal(readDecisionRecord(bad), null);
  });

  it('a record written before the hint members reads as a main request with no ids, and report takes it', () => {
    const old = readDecisionRecord(JSON.parse(v1Lines[0]))!;
    assert.equal(old.requestClass, undefined);
    assert.equal(recordedRequestClass(old.requestClass), 'main');
    assert.equal(computeReport([old, { ...old, requestId: 'x', requestClass: 'auxiliary', unitKey: old.stickyKeyHash }]).decisions, 2);
  });

  it('report counts the sessions of a version 1 log by their hashes', async () => {
    const { records, badLines } = await readDecisionLogs([FIXTURE]);
    assert.equal(badLines, 0);
    const ids = new Set(v1Lines.map((l) => (JSON.parse(l) as { sessionId: string }).sessionId));
    assert.equal(computeReport(records).sessions, ids.size);
    assert.ok(records.every((r) => r.stickyKeyHash !== null && ids.has(r.stickyKeyHash) === false));
  });
});
