import { strict as assert } from 'node:assert';
import { WaitingRoom, waitingLimits, type WaitingLimits } from '../../../src/proxy/state/waitingRoom';
import { ClientLink } from '../../../src/proxy/upstream/call';
import { parseConfigText } from '../../../src/config/load';
import { policyFrom } from '../../../src/config/schema';
import { DEFAULT_POLICY } from '../../../src/routing/policy';

const LIMITS: WaitingLimits = { maxRequests: 2, maxBodyBytes: 1000 };

describe('proxy/state WaitingRoom', () => {
  it('holds requests up to the request bound and refuses the next at once, holding nothing', async () => {
    const room = new WaitingRoom();
    const a = room.hold({ queue: 'acct', bodyBytes: 10, maxMs: 10_000, client: new ClientLink() }, LIMITS);
    const b = room.hold({ queue: 'other', bodyBytes: 10, maxMs: 10_000, client: new ClientLink() }, LIMITS);
    assert.ok(a && b);
    assert.equal(room.hold({ queue: 'acct', bodyBytes: 10, maxMs: 10_000, client: new ClientLink() }, LIMITS), undefined, 'the bound is shared across queues');
    assert.equal(room.heldRequests, 2);
    assert.equal(room.wake('acct'), 1);
    assert.equal(await a, 'woken');
    assert.equal(room.heldRequests, 1, 'a released request gives its place back');
    room.close();
    assert.equal(await b, 'woken');
  });

  it('counts the bodies held against the byte bound', async () => {
    const room = new WaitingRoom();
    const big = room.hold({ queue: 'q', bodyBytes: 900, maxMs: 10_000, client: new ClientLink() }, LIMITS);
    assert.ok(big);
    assert.equal(room.heldBodyBytes, 900);
    assert.equal(room.hold({ queue: 'q', bodyBytes: 101, maxMs: 10_000, client: new ClientLink() }, LIMITS), undefined);
    const small = room.hold({ queue: 'q', bodyBytes: 100, maxMs: 10_000, client: new ClientLink() }, LIMITS);
    assert.ok(small, 'exactly the bound still fits');
    room.close();
    await Promise.all([big, small]);
    assert.equal(room.heldBodyBytes, 0);
  });

  it('wakes the oldest waiters of a queue first, and only that queue', async () => {
    const room = new WaitingRoom();
    const order: string[] = [];
    const limits = { maxRequests: 10, maxBodyBytes: 1000 };
    const hold = (queue: string, name: string) => room.hold({ queue, bodyBytes: 0, maxMs: 10_000, client: new ClientLink() }, limits)!.then((end) => order.push(`${name}:${end}`));
    const all = [hold('a', 'a1'), hold('b', 'b1'), hold('a', 'a2'), hold('a', 'a3')];
    assert.equal(room.wake('a', 2), 2);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(order, ['a1:woken', 'a2:woken']);
    assert.equal(room.waiting('a'), 1);
    assert.equal(room.waiting('b'), 1);
    room.close();
    await Promise.all(all);
  });

  it('ends a hold at its deadline', async () => {
    const room = new WaitingRoom();
    const end = await room.hold({ queue: 'q', bodyBytes: 5, maxMs: 5, client: new ClientLink() }, LIMITS);
    assert.equal(end, 'deadline');
    assert.equal(room.heldRequests, 0);
    assert.equal(room.heldBodyBytes, 0);
  });

  it('a client that leaves while held ends its hold and holds nothing; one already gone is never held', async () => {
    const room = new WaitingRoom();
    const client = new ClientLink();
    const held = room.hold({ queue: 'q', bodyBytes: 50, maxMs: 10_000, client }, LIMITS);
    client.markGone();
    assert.equal(await held, 'client_gone');
    assert.equal(room.heldRequests, 0);
    assert.equal(room.heldBodyBytes, 0);
    assert.equal(room.hold({ queue: 'q', bodyBytes: 1, maxMs: 10_000, client }, LIMITS), undefined);
  });

  it('holds nothing after close, and with a bound of 0', () => {
    const room = new WaitingRoom();
    assert.equal(room.hold({ queue: 'q', bodyBytes: 0, maxMs: 10, client: new ClientLink() }, { maxRequests: 0, maxBodyBytes: 1000 }), undefined);
    room.close();
    assert.equal(room.hold({ queue: 'q', bodyBytes: 0, maxMs: 10, client: new ClientLink() }, LIMITS), undefined);
  });
});

describe('config: routing.max-waiting-requests', () => {
  it('defaults to 256 requests and half the body budget', () => {
    assert.deepEqual(waitingLimits(DEFAULT_POLICY), { maxRequests: 256, maxBodyBytes: 128 * 1024 * 1024 });
  });

  it('is read from the file and refused with its name when negative', () => {
    const ok = parseConfigText('routing:\n  max-waiting-requests: 0\n');
    assert.ok(ok.ok);
    assert.equal(policyFrom(ok.ok ? ok.config.routing : undefined, {}).maxWaitingRequests, 0);
    const bad = parseConfigText('routing:\n  max-waiting-requests: -1\n');
    assert.equal(bad.ok, false);
    assert.match((bad as { error: string }).error, /^routing\.max-waiting-requests: must be 0/);
  });
});
