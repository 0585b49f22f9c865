/**
 * Admission of a request that an account has just throttled for concurrency (src/proxy/pipeline/admission.ts):
 * it goes back with fewer in flight than it was sent with and within the limit just learned, so a raise
 * of the learned limit (a probe) is taken by another request — never the same one again and again.
 */
import { strict as assert } from 'node:assert';
import { hasRoom, throttledCap } from '../../../src/proxy/pipeline/admission';
import type { RequestContext } from '../../../src/proxy/pipeline/context';
import { RouterState } from '../../../src/proxy/state/routerState';
import { DEFAULT_POLICY } from '../../../src/routing/policy';
import type { PlanAccount } from '../../../src/routing/planner/types';

const NOW = 1_800_000_000_000;
const A = { id: 'a', fallback: false } as PlanAccount;

/** A request as admission sees it: the router's state, the policy (no ramp: only the limit decides), and its own throttles. */
function request(state: RouterState): RequestContext {
  return {
    services: { state, now: () => NOW },
    generation: { config: { policy: { ...DEFAULT_POLICY, admissionRamp: false } } },
    throttledOn: undefined,
  } as unknown as RequestContext;
}

describe('admission after a concurrency throttle', () => {
  it('gives the probing slot of a raised limit to another request, not to the one throttled', () => {
    const state = new RouterState(3_600_000);
    // Three were sent at once, the third throttled: the limit becomes 2.
    state.concurrency.throttled('a', 3, 3, NOW);
    const throttled = request(state);
    throttled.throttledOn = new Map([['a', throttledCap(throttled, A, 3)]]);
    assert.equal(throttled.throttledOn.get('a'), 2);
    // Two answers with the limit in full use raise it to 3: a probe.
    state.concurrency.succeeded('a', 2);
    state.concurrency.succeeded('a', 2);
    assert.equal(state.concurrency.limit('a', NOW)?.limit, 3);

    const leases = [state.leases.acquire('a'), state.leases.acquire('a')];
    assert.equal(hasRoom(request(state), A), true, 'a fresh request takes the probing slot');
    assert.equal(hasRoom(throttled, A), false, 'the throttled one waits for a slot within the limit it was throttled at');
    leases.pop()!.release();
    assert.equal(hasRoom(throttled, A), true, 'and goes with fewer in flight');
    leases.pop()!.release();
  });

  it('a request throttled alone (a rate throttle) may still go back alone', () => {
    const state = new RouterState(3_600_000);
    const r = request(state);
    assert.equal(throttledCap(r, A, 1), 1);
  });
});
