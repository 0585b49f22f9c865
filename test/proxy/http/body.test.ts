import { strict as assert } from 'node:assert';
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { BodyBudget, BodyBudgetError, readBody, RequestBody } from '../../../src/proxy/http/body';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** What undici does with an iterable body: reads it to the end, once. */
function send(body: Buffer | Iterable<Buffer> | undefined): Buffer {
  if (body === undefined) return Buffer.alloc(0);
  return Buffer.isBuffer(body) ? body : Buffer.concat([...body]);
}

describe('RequestBody (kept for failover, let go at commit)', () => {
  it('gives every call the whole body, in order, without a copy', () => {
    const chunks = [Buffer.from('{"model":'), Buffer.from('"m",'), Buffer.from('"x":1}')];
    const body = new RequestBody(chunks, 19);
    for (let call = 0; call < 3; call++) assert.equal(send(body.forUpstream()).toString(), '{"model":"m","x":1}');
    // The chunks themselves go out, not copies.
    const feed = body.forUpstream() as Iterable<Buffer>;
    assert.deepEqual(
      [...feed].map((c, i) => c === chunks[i]),
      [true, true, true],
    );
    assert.deepEqual([...feed], [], 'one pass per call');
    const abc = Buffer.from('abc');
    assert.equal(RequestBody.of(abc).forUpstream(), abc, 'a single chunk goes as it is');
    assert.equal(RequestBody.of(Buffer.alloc(0)).forUpstream(), undefined);
  });

  it('lets go of the bytes once released, while the call that read them still runs', async () => {
    const refs: WeakRef<Buffer>[] = [];
    const make = () => {
      const chunks = [Buffer.alloc(64 * 1024, 1), Buffer.alloc(64 * 1024, 2)];
      for (const c of chunks) refs.push(new WeakRef(c));
      return new RequestBody(chunks, 128 * 1024);
    };
    const body = make();
    const call = body.forUpstream(); // what undici's running request holds
    assert.equal(send(call).length, 128 * 1024);
    await new Promise((r) => setImmediate(r));
    gc();
    assert.ok(
      refs.every((r) => r.deref() !== undefined),
      'kept for a failover until the answer is committed',
    );
    body.release();
    await new Promise((r) => setImmediate(r));
    gc();
    assert.ok(
      refs.every((r) => r.deref() === undefined),
      'gone after commit although the call and the body object live on',
    );
    assert.ok(call !== undefined && body.length === 128 * 1024);
    assert.throws(() => body.forUpstream(), /released/);
  });
});

describe('BodyBudget (the bodies held at once)', () => {
  /** A request that delivers `chunks` and ends, as node's IncomingMessage does. */
  function fakeRequest(chunks: Buffer[]): IncomingMessage {
    const req = new EventEmitter() as EventEmitter & { destroy(): void; pause(): void };
    req.destroy = () => undefined;
    req.pause = () => undefined;
    setImmediate(() => {
      for (const c of chunks) req.emit('data', c);
      req.emit('end');
    });
    return req as unknown as IncomingMessage;
  }
  const KB = 1024;

  it('counts a chunked body chunk by chunk, refuses it when the budget runs out, and gives its bytes back', async () => {
    const budget = new BodyBudget();
    const held = await readBody(fakeRequest([Buffer.alloc(40 * KB), Buffer.alloc(40 * KB)]), NaN, budget, 100 * KB, 0);
    assert.equal(budget.heldBytes, 80 * KB);
    await assert.rejects(readBody(fakeRequest([Buffer.alloc(10 * KB), Buffer.alloc(20 * KB)]), NaN, budget, 100 * KB, 0), BodyBudgetError);
    assert.equal(budget.heldBytes, 80 * KB, 'the refused body gave back the 10 KB it had counted');
    held.release();
    held.release();
    assert.equal(budget.heldBytes, 0, 'released once, given back once');
  });

  it('counts a declared body at its head and refuses one that does not fit before any byte arrives', async () => {
    const budget = new BodyBudget();
    const first = readBody(fakeRequest([Buffer.alloc(60 * KB)]), 60 * KB, budget, 100 * KB, 0);
    assert.equal(budget.heldBytes, 60 * KB, 'counted from the head');
    await assert.rejects(readBody(fakeRequest([]), 50 * KB, budget, 100 * KB, 0), BodyBudgetError);
    (await first).release();
    assert.equal(budget.heldBytes, 0);
  });
});
