/**
 * What a router accepts from the shared store (docs/security.md#the-shared-store): values signed
 * with the pool's key for their own key name and sender, within bounds.
 */
import { strict as assert } from 'node:assert';
import { macKeyOf, signValue, verifyValue } from '../../src/store/signedValues';
import { cooldownOf, evidenceOf, inflightOf, limitOf } from '../../src/proxy/state/sharedValues';
import { openPair, sealPair } from '../../src/store/pairVersions';
import { seal } from '../../src/store/encryption';

const POOL = macKeyOf(Buffer.alloc(32, 1));
const OTHER = macKeyOf(Buffer.alloc(32, 2));
const NOW = Date.UTC(2026, 11, 6);
const MIN = 60_000;
const DAY = 86_400_000;

describe('shared store: signed values and their bounds', () => {
  it('accepts a value signed by the pool for its key, and nothing moved, altered, re-attributed or signed with another key', () => {
    const text = signValue(POOL, 'claude-router:inflight:aa', 'aa', '{"a":[1,null]}');
    assert.deepEqual(verifyValue(POOL, 'claude-router:inflight:aa', text), { ok: true, sender: 'aa', json: '{"a":[1,null]}' });
    assert.deepEqual(verifyValue(POOL, 'claude-router:inflight:bb', text), { ok: false, why: 'not authentic' }, 'moved to another key');
    assert.deepEqual(verifyValue(POOL, 'claude-router:inflight:aa', text.replace('[1,', '[9,')), { ok: false, why: 'not authentic' }, 'altered');
    assert.deepEqual(verifyValue(POOL, 'claude-router:inflight:aa', text.replace('s1.aa.', 's1.bb.')), { ok: false, why: 'not authentic' }, 'another sender');
    assert.deepEqual(verifyValue(OTHER, 'claude-router:inflight:aa', text), { ok: false, why: 'not authentic' }, 'another pool');
    assert.deepEqual(verifyValue(POOL, 'claude-router:inflight:aa', '{"a":5}'), { ok: false, why: 'unsigned' });
  });

  it('takes a cooldown no longer than its reason allows, evidence observed near now, and small counts', () => {
    const cd = (reason: string, forMs: number) => cooldownOf({ untilMs: NOW + forMs, reason, setAtMs: NOW }, NOW);
    assert.ok(cd('window_exhausted', 7 * DAY), 'a rejected weekly window');
    assert.equal(cd('window_exhausted', 30 * DAY), undefined);
    assert.ok(cd('throttle', 10 * MIN));
    assert.equal(cd('throttle', DAY), undefined, 'a throttle of a day');
    assert.equal(cd('overloaded', 10 * MIN), undefined);
    const snap = { observedAtMs: NOW, source: 'headers', scoped: {}, weekly: { status: 'rejected', utilization: 1, resetAtMs: NOW + 3 * DAY } };
    assert.ok(evidenceOf(snap, NOW));
    assert.equal(evidenceOf({ ...snap, observedAtMs: 9e15 }, NOW), undefined, 'observed in the future');
    assert.equal(evidenceOf({ ...snap, weekly: { ...snap.weekly, resetAtMs: Date.UTC(2100, 0, 1) } }, NOW), undefined, 'a reset in 2100');
    assert.equal(inflightOf({ a: 5 }), undefined);
    assert.equal(inflightOf({ a: [1e308, null] }), undefined);
    assert.deepEqual(inflightOf({ a: [2, null] }), { a: [2, null] });
    assert.equal(limitOf({ limit: 2, credit: 0, throttledAt: 2, lastThrottleAtMs: NOW, pausedUntilMs: NOW + DAY }, NOW), undefined, 'a pause of a day');
  });

  it('seals a pair with its version; a pair sealed without one reads as version 0', () => {
    const key = Buffer.alloc(32, 3);
    const creds = { accessToken: 'sk-ant-oat01-x', refreshToken: 'sk-ant-ort01-y', expiresAtMs: NOW };
    assert.deepEqual(openPair(key, sealPair(key, creds, 7, 'claude-router:cred:a'), 'claude-router:cred:a'), { creds, version: 7 });
    assert.deepEqual(openPair(key, seal(key, JSON.stringify(creds), 'claude-router:cred:a'), 'claude-router:cred:a'), { creds, version: 0 });
  });
});
