import { strict as assert } from 'node:assert';
import { LeaseTable } from '../../../src/proxy/state/leases';
import { OutputSamples } from '../../../src/proxy/state/outputSamples';
import type { CostEstimate } from '../../../src/routing/costEstimate';

const cost = (input: number, read: number, write: number, output: number): CostEstimate => ({
  inputTokens: input,
  cacheReadTokens: read,
  cacheWriteTokens: write,
  outputTokens: output,
});
const USAGE = { inputTokens: 3, outputTokens: 420, cacheCreationInputTokens: 10, cacheReadInputTokens: 900 };

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

  describe('cost reservations', () => {
    it('sums the reservations in flight per account, by kind, and a plan sees them as they are taken', () => {
      const t = new LeaseTable();
      assert.equal(t.reserved('a'), undefined);
      const first = t.acquire('a', null, { cost: cost(100, 0, 0, 1024), model: 'm' });
      const seenByNextPlan = t.reserved('a');
      t.acquire('a', null, { cost: cost(0, 900, 100, 500), model: 'm' });
      assert.deepEqual(t.reserved('a'), cost(100, 900, 100, 1524));
      assert.deepEqual(seenByNextPlan, cost(100, 0, 0, 1024), 'a sum a plan holds is never changed under it');
      first.release();
      assert.deepEqual(t.reserved('a'), cost(0, 900, 100, 500));
      assert.equal(t.reserved('b'), undefined);
    });

    it('reconcile gives the reservation back and teaches the model its actual output, once; a later release changes nothing', () => {
      const outputs = new OutputSamples();
      const t = new LeaseTable(undefined, outputs);
      const l = t.acquire('a', null, { cost: cost(0, 9_000, 1_000, 32_000), model: 'm' });
      l.reconcile(USAGE);
      l.release();
      l.reconcile(USAGE);
      assert.equal(t.reserved('a'), undefined, 'the estimate is gone: nothing counts twice');
      assert.equal(t.inflight('a'), 0);
      assert.deepEqual(
        outputs.estimates().map((e) => [e.model, e.samples]),
        [['m', 1]],
        'the actual output was learned once',
      );
    });

    it('a released lease (error, abort) teaches nothing, even when reconciled afterwards', () => {
      const outputs = new OutputSamples();
      const t = new LeaseTable(undefined, outputs);
      const l = t.acquire('a', null, { cost: cost(10, 0, 0, 1024), model: 'm' });
      l.release();
      l.reconcile(USAGE);
      assert.equal(t.reserved('a'), undefined);
      assert.deepEqual(outputs.estimates(), []);
    });

    it('returns every account to no reservation after many interleaved reserve/reconcile/release calls', () => {
      const t = new LeaseTable();
      const held = Array.from({ length: 60 }, (_, i) => t.acquire(`acct${i % 3}`, null, { cost: cost(i, 2 * i, 3 * i, 100 + i), model: null }));
      held.forEach((l, i) => (i % 2 ? l.reconcile(USAGE) : l.release()));
      held.forEach((l) => l.release());
      for (let i = 0; i < 3; i++) assert.equal(t.reserved(`acct${i}`), undefined);
      assert.equal(t.total(), 0);
    });
  });
});
