import { strict as assert } from 'node:assert';
import { LeaseTable } from '../../../src/proxy/state/leases';

describe('proxy/leases LeaseTable', () => {
  it('counts acquired leases per account and in total', () => {
    const t = new LeaseTable();
    assert.equal(t.inflight('a'), 0);
    assert.equal(t.total(), 0);
    const a1 = t.acquire('a');
    t.acquire('a');
    t.acquire('b');
    assert.equal(a1.account, 'a');
    assert.equal(t.inflight('a'), 2);
    assert.equal(t.inflight('b'), 1);
    assert.equal(t.total(), 3);
  });

  it('release decrements once; a second release does nothing', () => {
    const t = new LeaseTable();
    const a1 = t.acquire('a');
    const a2 = t.acquire('a');
    a1.release();
    assert.equal(t.inflight('a'), 1);
    a1.release();
    a1.release();
    assert.equal(t.inflight('a'), 1, 'idempotent: the other lease still counts');
    a2.release();
    assert.equal(t.inflight('a'), 0);
    assert.equal(t.total(), 0);
  });

  it('never goes negative, and a stale lease cannot eat a newer one', () => {
    const t = new LeaseTable();
    const old = t.acquire('a');
    old.release();
    const fresh = t.acquire('a');
    old.release();
    assert.equal(t.inflight('a'), 1);
    fresh.release();
    fresh.release();
    assert.equal(t.inflight('a'), 0);
    assert.equal(t.total(), 0);
  });

  it('accounts are independent', () => {
    const t = new LeaseTable();
    const a = t.acquire('a');
    t.acquire('b');
    a.release();
    assert.equal(t.inflight('b'), 1);
    assert.equal(t.total(), 1);
  });

  it('calls onChange on every acquire and every effective release only', () => {
    let changes = 0;
    const t = new LeaseTable(() => changes++);
    const l = t.acquire('a');
    assert.equal(changes, 1);
    l.release();
    l.release();
    assert.equal(changes, 2);
  });

  it('balances under an interleaving of many acquires and double releases', () => {
    const t = new LeaseTable();
    const held = [];
    for (let i = 0; i < 100; i++) held.push(t.acquire(`acct${i % 4}`));
    for (let i = 0; i < 100; i += 2) {
      held[i].release();
      held[i].release();
    }
    assert.equal(t.total(), 50);
    for (const l of held) l.release();
    assert.equal(t.total(), 0);
    for (let i = 0; i < 4; i++) assert.equal(t.inflight(`acct${i}`), 0);
  });
});
