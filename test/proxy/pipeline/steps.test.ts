import { strict as assert } from 'node:assert';
import type { RequestContext } from '../../../src/proxy/pipeline/context';
import { runSteps, type Step } from '../../../src/proxy/pipeline/steps';

/** Steps that note their names in `ran`; the context is never read by them. */
function steps(ran: string[], ...specs: Array<[string, boolean | void | 'wait' | 'wait-end']>): Step[] {
  return specs.map(([name, result]) => () => {
    ran.push(name);
    if (result === 'wait') return Promise.resolve(false);
    if (result === 'wait-end') return Promise.resolve(true);
    return result;
  });
}

const ctx = {} as RequestContext;

describe('the request path runner', () => {
  it('answers a request whose steps never wait without a promise', () => {
    const ran: string[] = [];
    assert.equal(runSteps(steps(ran, ['a', undefined], ['b', false], ['c', undefined]), ctx), undefined);
    assert.deepEqual(ran, ['a', 'b', 'c']);
  });

  it('stops at the step that answered', () => {
    const ran: string[] = [];
    assert.equal(runSteps(steps(ran, ['authenticate', true], ['route', undefined]), ctx), undefined);
    assert.deepEqual(ran, ['authenticate']);
  });

  it('goes on after a step that waited, and stops at a later one that answered after waiting', async () => {
    const ran: string[] = [];
    const pending = runSteps(steps(ran, ['a', undefined], ['body', 'wait'], ['b', undefined], ['attempt', 'wait-end'], ['never', undefined]), ctx);
    assert.ok(pending instanceof Promise);
    assert.deepEqual(ran, ['a', 'body'], 'the steps after a wait run only once it is over');
    await pending;
    assert.deepEqual(ran, ['a', 'body', 'b', 'attempt']);
  });

  it('passes a throwing step on to the caller, synchronously or as the rejection', async () => {
    const boom: Step = () => {
      throw new Error('boom');
    };
    assert.throws(() => runSteps([boom], ctx), /boom/);
    const ran: string[] = [];
    await assert.rejects(Promise.resolve(runSteps([...steps(ran, ['body', 'wait']), boom], ctx)), /boom/);
  });
});
