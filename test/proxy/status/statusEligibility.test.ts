/**
 * `/status` gives each account its displayed status (its own state, whatever request comes next)
 * and, separately, its eligibility for a typical new request (the filter's verdict in the
 * preview); the CLI table shows both, in the verdict's own words.
 */
import { strict as assert } from 'node:assert';
import { formatStatusTable } from '../../../src/cli/statusCommand';
import { accountStatus, type AccountReport, type StatusReport } from '../../../src/proxy/status/status';
import { eligibilityText, statusAndEligibility } from '../../../src/proxy/status/statusView';
import { verdictText } from '../../../src/routing/planner/verdict';
import { accounts, callRouter, routerStatus, startHarness } from '../../support/routerHarness';

describe('status: displayed status and eligibility', () => {
  it('defines the displayed status from the account state alone, first match wins', () => {
    const base = { enabled: true, needsSignIn: false, windowExhausted: false, coolingReason: undefined };
    assert.equal(accountStatus(base), 'Active');
    assert.equal(accountStatus({ ...base, coolingReason: 'throttle' }), 'Paused');
    assert.equal(accountStatus({ ...base, coolingReason: 'server_error' }), 'Paused');
    assert.equal(accountStatus({ ...base, coolingReason: 'window_exhausted' }), 'Limited');
    assert.equal(accountStatus({ ...base, windowExhausted: true }), 'Limited');
    assert.equal(accountStatus({ ...base, windowExhausted: true, coolingReason: 'throttle' }), 'Limited');
    assert.equal(accountStatus({ ...base, needsSignIn: true, windowExhausted: true, coolingReason: 'throttle' }), 'Needs sign-in');
    assert.equal(accountStatus({ ...base, enabled: false, needsSignIn: true }), 'Disabled');
  });

  it('reports status and eligibility side by side for active, paused, limited and disabled accounts; the CLI table shows both', async () => {
    const spec = accounts('a', 'b', 'c', 'd');
    const h = await startHarness(spec, {
      configAccounts: spec.map((x) => ({ label: x.label, accessToken: x.accessToken, refreshToken: x.refreshToken, enabled: x.label !== 'd' })),
    });
    try {
      h.sim.injectFault('a', { kind: 'throttle', retryAfterS: 60 });
      await callRouter(h, { session: 's1' });
      h.sim.injectFault('b', { kind: 'exhaust', window: '5h', resetInMs: 2 * 3_600_000 });
      await callRouter(h, { session: 's2' });
      const s = (await routerStatus(h)) as StatusReport;
      const by = (l: string) => s.accounts.find((x) => x.label === l) as AccountReport;
      const now = Date.now();

      assert.equal(by('a').status, 'Paused');
      assert.equal(by('a').eligibility?.code, 'cooling');
      assert.match(eligibilityText(by('a'), now), /^cooling — throttled, (59 s|1 min) remaining$/);
      assert.equal(by('b').status, 'Limited');
      assert.ok(['cooling', 'window_exhausted'].includes(by('b').eligibility!.code), JSON.stringify(by('b').eligibility));
      assert.equal(by('c').status, 'Active');
      assert.deepEqual(by('c').eligibility, { code: 'eligible' });
      assert.equal(statusAndEligibility(by('c'), now), 'Active · eligible');
      assert.equal(by('d').status, 'Disabled');
      assert.deepEqual(by('d').eligibility, { code: 'disabled' });
      // The eligibility is the preview's filter verdict, not a second derivation.
      for (const l of ['a', 'b', 'c']) assert.deepEqual(by(l).eligibility, s.preview.verdicts.find((v) => v.account === l)!.filter, l);

      const table = formatStatusTable(s, now);
      // SIGNED IN: the grant's age (these pairs were seeded from the config file: unknown).
      assert.match(table, /^ACCOUNT\s+STATE\s+STATUS\s.*\sELIGIBILITY\s+SIGNED IN\s+NOTE$/m);
      assert.match(table, /^c\s+usable\s+Active\s.*\seligible\s+unknown$/m);
      assert.match(table, /^d\s+disabled\s+Disabled\s.*\s0\s+disabled\s/m);
      assert.ok(table.includes(`  Limited  `), table);
      assert.ok(table.includes(verdictText(by('b').eligibility!, now)), table);
      // "why" reads in the order a new request would try them: c (the usable one) first, the disabled d last.
      const why = table
        .split('\nwhy:\n')[1]
        .split('\n\n')[0]
        .split('\n')
        .map((l) => l.trim().split(/\s+/)[0]);
      assert.equal(why[0], 'c', table);
      assert.equal(why.at(-1), 'd', table);
    } finally {
      await h.close();
    }
  });
});
