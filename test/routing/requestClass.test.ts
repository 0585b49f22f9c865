import { strict as assert } from 'node:assert';
import { stickyKeyHash } from '../../src/routing/identify';
import { hintIdHash, isAuxiliaryClass, recordedRequestClass, requestClassOf, unitSourceOf } from '../../src/routing/requestClass';

describe('routing/requestClass: what Claude Code says a request is', () => {
  it('reads the observed classes; a missing, unknown or differently cased value is main', () => {
    assert.deepEqual(
      ['main', 'subagent', 'compaction', 'auxiliary'].map((c) => requestClassOf(c)),
      ['main', 'subagent', 'compaction', 'auxiliary'],
    );
    for (const other of [undefined, '', 'Subagent', 'summary-extraction', 'blocking-subagent', 'x'.repeat(500)]) assert.equal(requestClassOf(other), 'main');
    for (const recorded of [undefined, null, 42, {}, 'nope']) assert.equal(recordedRequestClass(recorded), 'main', 'older lines read as main');
    assert.equal(recordedRequestClass('subagent'), 'subagent');
  });

  it('auxiliary and compaction are not conversation turns; main and subagent are', () => {
    assert.deepEqual((['main', 'subagent', 'compaction', 'auxiliary'] as const).map(isAuxiliaryClass), [false, false, true, true]);
  });

  it('hashes a prompt or agent id exactly as a session id, trimmed; refuses what is not an id', () => {
    assert.equal(hintIdHash('a6d52659166f154a1', 'agent'), stickyKeyHash('a6d52659166f154a1'));
    assert.equal(hintIdHash(' 8c791312-71d9-4f5d-995d-39484f695cbb ', 'prompt'), stickyKeyHash('8c791312-71d9-4f5d-995d-39484f695cbb'));
    assert.equal(hintIdHash('8c791312-71d9-4f5d-995d-39484f695cbb', 'prompt'), hintIdHash('8c791312-71d9-4f5d-995d-39484f695cbb', 'prompt'), 'remembered: the same hash again');
    for (const bad of [undefined, '', '   ', 'has space', 'é', 'x'.repeat(201)]) assert.equal(hintIdHash(bad, 'prompt'), null, String(bad));
  });

  it('names the header or field that gave the unit its key', () => {
    assert.deepEqual((['header', 'metadata', 'fingerprint', 'none', 'unknown'] as const).map(unitSourceOf), [
      'x-claude-code-session-id',
      'metadata.user_id',
      'fingerprint',
      'none',
      'none',
    ]);
  });
});
