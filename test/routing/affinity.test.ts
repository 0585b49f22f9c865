import { strict as assert } from 'node:assert';
import { AFFINITY_CAPACITY, SessionAffinityStore } from '../../src/routing/affinity';
import { HOUR, MIN, NOW } from './builders';

const TTL = 10 * MIN;

describe('routing/affinity SessionAffinityStore', () => {
  it('binds and reads back; re-binding moves the session', () => {
    const s = new SessionAffinityStore(TTL);
    assert.equal(s.get('s1', NOW), undefined);
    s.bind('s1', 'a', NOW);
    assert.deepEqual(s.get('s1', NOW + 1), { account: 'a', lastServedAtMs: NOW });
    s.bind('s1', 'b', NOW + MIN);
    assert.deepEqual(s.get('s1', NOW + MIN), { account: 'b', lastServedAtMs: NOW + MIN });
    assert.equal(s.liveCount(NOW + MIN), 1);
  });

  it('exactly TTL idle is still live; TTL + 1 ms is gone and purged', () => {
    const s = new SessionAffinityStore(TTL);
    s.bind('s1', 'a', NOW);
    assert.equal(s.get('s1', NOW + TTL)?.account, 'a');
    assert.equal(s.get('s1', NOW + TTL + 1), undefined);
    // purged: even a read "back in time" no longer finds it
    assert.equal(s.get('s1', NOW), undefined);
    assert.equal(s.liveCount(NOW), 0);
  });

  it('a read does not extend the TTL; a bind does', () => {
    const s = new SessionAffinityStore(TTL);
    s.bind('s1', 'a', NOW);
    s.bind('s2', 'a', NOW);
    for (let t = NOW; t <= NOW + TTL; t += MIN) assert.ok(s.get('s1', t));
    assert.equal(s.get('s1', NOW + TTL + 1), undefined);
    s.bind('s2', 'a', NOW + TTL);
    assert.equal(s.get('s2', NOW + 2 * TTL)?.account, 'a');
  });

  it('evicts the least-recently-BOUND session at capacity; a get does not save an entry', () => {
    const s = new SessionAffinityStore(TTL, 3);
    s.bind('s1', 'a', NOW);
    s.bind('s2', 'a', NOW + 1);
    s.bind('s3', 'a', NOW + 2);
    assert.ok(s.get('s1', NOW + 3)); // a read: must not refresh recency
    s.bind('s4', 'a', NOW + 4);
    assert.equal(s.get('s1', NOW + 5), undefined, 's1 was bound least recently');
    assert.ok(s.get('s2', NOW + 5));
    assert.ok(s.get('s3', NOW + 5));
    assert.ok(s.get('s4', NOW + 5));
  });

  it('re-binding refreshes recency', () => {
    const s = new SessionAffinityStore(TTL, 3);
    s.bind('s1', 'a', NOW);
    s.bind('s2', 'a', NOW);
    s.bind('s3', 'a', NOW);
    s.bind('s1', 'b', NOW + 1);
    s.bind('s4', 'a', NOW + 2);
    assert.equal(s.get('s2', NOW + 3), undefined);
    assert.equal(s.get('s1', NOW + 3)?.account, 'b');
  });

  it('the default capacity is 5,000 sessions', () => {
    assert.equal(AFFINITY_CAPACITY, 5_000);
    const s = new SessionAffinityStore(HOUR);
    for (let i = 0; i <= 5_000; i++) s.bind(`s${i}`, 'a', NOW);
    assert.equal(s.liveCount(NOW), 5_000);
    assert.equal(s.get('s0', NOW), undefined);
    assert.ok(s.get('s1', NOW));
  });

  it('clear() drops everything', () => {
    const s = new SessionAffinityStore(TTL);
    s.bind('s1', 'a', NOW);
    s.bind('s2', 'b', NOW);
    s.clear();
    assert.equal(s.get('s1', NOW), undefined);
    assert.deepEqual(s.live(NOW), []);
  });

  it('setIdleTtl judges existing bindings by the new TTL', () => {
    const s = new SessionAffinityStore(TTL);
    s.bind('s1', 'a', NOW);
    s.bind('s2', 'a', NOW);
    s.setIdleTtl(2 * TTL);
    assert.ok(s.get('s1', NOW + TTL + 1), 'a longer TTL keeps it');
    s.setIdleTtl(MIN);
    assert.equal(s.get('s2', NOW + MIN + 1), undefined, 'a shorter TTL drops it');
  });

  it('forgetAccount drops every binding to that account', () => {
    const s = new SessionAffinityStore(TTL);
    for (let i = 0; i < 10; i++) s.bind(`s${i}`, i % 3 === 0 ? 'gone' : 'kept', NOW + i);
    s.forgetAccount('gone');
    const live = s.live(NOW + 10);
    assert.ok(
      live.every((b) => b.account === 'kept'),
      JSON.stringify(live),
    );
    assert.equal(live.length, 6);
  });

  it('live() lists live bindings most recently bound first and purges expired ones', () => {
    const s = new SessionAffinityStore(TTL);
    s.bind('old', 'a', NOW - TTL - 1);
    s.bind('s1', 'a', NOW - 2);
    s.bind('s2', 'b', NOW - 1);
    assert.deepEqual(s.live(NOW), [
      { sessionId: 's2', account: 'b', lastServedAtMs: NOW - 1 },
      { sessionId: 's1', account: 'a', lastServedAtMs: NOW - 2 },
    ]);
    assert.equal(s.get('old', NOW - TTL), undefined, 'the expired entry was purged');
  });

  it('load() restores saved bindings, skips expired ones, and keeps recency order', () => {
    const src = new SessionAffinityStore(TTL);
    src.bind('s1', 'a', NOW - 3);
    src.bind('s2', 'b', NOW - 2);
    src.bind('s3', 'c', NOW - 1);
    const saved = JSON.parse(JSON.stringify(src.live(NOW)));
    saved.push({ sessionId: 'stale', account: 'a', lastServedAtMs: NOW - TTL - 1 });

    const dst = new SessionAffinityStore(TTL, 3);
    dst.load(saved, NOW);
    assert.deepEqual(dst.live(NOW), src.live(NOW));
    assert.equal(dst.get('stale', NOW), undefined);
    // recency survived: the next bind evicts s1 (bound longest ago), not s2 or s3
    dst.bind('s4', 'd', NOW);
    assert.equal(dst.get('s1', NOW), undefined);
    assert.deepEqual(
      dst.live(NOW).map((b) => b.sessionId),
      ['s4', 's3', 's2'],
    );
    // the TTL still counts from the saved lastServedAtMs
    assert.ok(dst.get('s2', NOW - 2 + TTL));
    assert.equal(dst.get('s2', NOW - 2 + TTL + 1), undefined);
  });
});
