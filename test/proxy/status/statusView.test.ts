import { strict as assert } from 'node:assert';
import { formatDecision } from '../../../src/cli/decisionsCommand';
import { PLAIN } from '../../../src/cli/color';
import { accountBrief, accountDescription, accountState, decisionReasonText, poolSummary, whyNow } from '../../../src/proxy/status/statusView';
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

  it('an account that serves bound sessions says so, and the account new sessions go to is not "serving" while it carries nothing', async () => {
    // b's weekly window resets first, so expiry-first sends new sessions there; two sessions stay bound to a.
    const spec = accounts('a', 'b').map((x, i) => ({ ...x, sevenDayResetInMs: [3, 1][i] * 86_400_000 }));
    const h = await startHarness(spec, { routing: { sessionAffinity: true } });
    try {
      for (let i = 0; i < 2; i++) await h.router.poller.tick();
      const now = Date.now();
      h.router.engine.state.bind('00000000000000a1', 'a', now);
      h.router.engine.state.bind('00000000000000a2', 'a', now);
      const s = await routerStatus(h);
      const a = s.accounts.find((x: any) => x.label === 'a');
      const b = s.accounts.find((x: any) => x.label === 'b');
      assert.equal(s.preview.verdicts.find((v: any) => v.verdict === 'selected').account, 'b', 'a new session would go to b');
      assert.equal(accountState(a, s), 'serving');
      assert.equal(accountState(b, s), 'usable', 'b has nothing in flight and no bound session');
      assert.match(whyNow(a, s), /^Serves 2 bound sessions \(affinity\) — new sessions go to b: /);
      assert.doesNotMatch(whyNow(a, s), /Not picked now/);
      assert.match(whyNow(b, s), /^A new request would go here/);
    } finally {
      await h.close();
    }
  });

  it("a failover's reason says what the attempts met and which account was chosen first, never the first choice's reason as the server's", async () => {
    const h = await startHarness(accounts('a', 'b'));
    try {
      h.sim.injectFault('a', { kind: 'throttle', retryAfterS: 60 });
      await callRouter(h, { session: 's' });
      const [r] = h.router.engine.recentDecisions(1);
      assert.equal(r.servedBy, 'b');
      assert.equal(decisionReasonText(r), 'failed over (a 429 throttle); a was chosen first: it comes first in the account order');
      assert.match(formatDecision(r, PLAIN), /→ b {2}success 200 {2}\d+ ms {2}fill-first: failed over \(a 429 throttle\); a was chosen first: /);

      await callRouter(h, { session: 't' });
      const [plain] = h.router.engine.recentDecisions(1);
      assert.equal(plain.servedBy, 'b');
      assert.doesNotMatch(decisionReasonText(plain), /failed over/, 'a request its chosen account served reads as before');
    } finally {
      await h.close();
    }
  });

  it('the Accounts view description fits the default sidebar: the windows, the status only when it is not plain Active and eligible', async () => {
    const spec = accounts('work', 'personal', 'team', 'spare').map((x, i) => ({
      ...x,
      initialFiveHourUsed: [0.35, 0.98, 0.1, 0.2][i],
      initialSevenDayUsed: [0.62, 0.4, 0.2, 0.1][i],
    }));
    const h = await startHarness(spec, {
      configAccounts: spec.map((x) => ({ label: x.label, accessToken: x.accessToken, refreshToken: x.refreshToken, enabled: x.label !== 'spare' })),
    });
    try {
      for (let i = 0; i < 3; i++) await h.router.poller.tick();
      h.router.engine.state.setCooldown('team', { untilMs: Date.now() + 60_000, reason: 'throttle', setAtMs: Date.now() });
      const s = await routerStatus(h);
      const brief = Object.fromEntries(s.accounts.map((a: any) => [a.label, accountBrief(a)]));
      assert.deepEqual(brief, {
        work: '5h 35% · 7d 62%',
        personal: 'at soft limit · 5h 98% · 7d 40%',
        team: 'Paused · 5h 10% · 7d 20%',
        spare: 'Disabled · 5h ? · 7d ?',
      });
    } finally {
      await h.close();
    }
  });

  it('an account that cannot serve is never "where a new request would go", even when it is the only one', async () => {
    const h = await startHarness(accounts('only'));
    try {
      h.router.engine.state.markNeedsSignIn('only', 'no usable credentials');
      const s = await routerStatus(h);
      assert.equal(whyNow(s.accounts[0], s), 'Not usable now: it needs you to sign in again.');
    } finally {
      await h.close();
    }
  });
});
