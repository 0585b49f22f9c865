import { strict as assert } from 'node:assert';
import { accountDescription, accountState, poolSummary, whyNow } from '../../../src/proxy/status/statusView';
import { accounts, callRouter, routerStatus, startHarness } from '../../support/routerHarness';

describe('status presentation (tree, status bar, panel, CLI)', () => {
  it('shows serving/cooling states, utilisation and why an account would or would not be picked', async () => {
    const h = await startHarness(accounts('a', 'b'));
    try {
      await callRouter(h, { session: 's' });
      h.sim.injectFault('a', { kind: 'throttle', retryAfterS: 60 });
      await callRouter(h, { session: 's' });
      const s = await routerStatus(h);
      const a = s.accounts.find((x: any) => x.label === 'a');
      const b = s.accounts.find((x: any) => x.label === 'b');
      assert.equal(accountState(a, s), 'cooling');
      assert.equal(accountState(b, s), 'serving');
      assert.match(accountDescription(a, Date.now()), /^5h \d+% · 7d \d+% · cooling (59 s|1 min)$/);
      assert.match(whyNow(a, s), /Not picked now: it is cooling down/);
      assert.match(whyNow(b, s), /A new request would go here/);
      assert.deepEqual(poolSummary(s).usable, 1);
      assert.equal(poolSummary(s).total, 2);
    } finally {
      await h.close();
    }
  });
});
