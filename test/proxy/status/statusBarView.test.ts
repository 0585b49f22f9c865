import { strict as assert } from 'node:assert';
import { statusBarView, type StatusBarInput } from '../../../src/proxy/status/statusBarView';

const pool = (over: Partial<StatusBarInput>): StatusBarInput => ({ configured: 3, usable: 3, total: 3, bestHeadroom: 0.64, simulated: false, ...over });

describe('status bar: what the item says and how loudly', () => {
  it('a fresh install (no account) is neutral and offers to set up, not an amber 0/0', () => {
    const v = statusBarView(pool({ configured: 0, usable: 0, total: 0, bestHeadroom: null }));
    assert.equal(v.text, '$(plug) Claude Router: set up');
    assert.equal(v.severity, 'normal');
    assert.equal(v.setUp, true);
    assert.match(v.ariaLabel, /no accounts yet/);
  });

  it('says what the numbers mean: usable of total and the best headroom as "left", not "80%"', () => {
    const v = statusBarView(pool({ usable: 2 }));
    assert.equal(v.text, '$(server-process) 2/3 usable · 64% left');
    assert.equal(v.severity, 'normal');
    assert.equal(v.setUp, false);
    assert.equal(v.ariaLabel, 'Claude Router: 2 of 3 accounts usable, best headroom 64% left. Activate for the routing status.');
    assert.equal(v.head, ' — 2 of 3 accounts usable, best headroom 64% left');
  });

  it('a one-account user is neutral while the account is usable', () => {
    const v = statusBarView(pool({ configured: 1, usable: 1, total: 1, bestHeadroom: 0.3 }));
    assert.equal(v.text, '$(server-process) 1/1 usable · 30% left');
    assert.equal(v.severity, 'normal');
    assert.match(v.ariaLabel, /1 of 1 account usable/);
  });

  it("warns while a shared pool's store is unreachable, and says the router serves from its own copy", () => {
    const v = statusBarView(pool({ storeUnreachable: true }));
    assert.equal(v.text, '$(server-process) 3/3 usable · 64% left · $(debug-disconnect) store offline');
    assert.equal(v.severity, 'warning');
    assert.match(v.ariaLabel, /shared store unreachable \(serving from this machine's copy\)/);
    assert.equal(statusBarView(pool({ storeUnreachable: false })).severity, 'normal');
  });

  it('warns only when fewer than two of several accounts are usable', () => {
    assert.equal(statusBarView(pool({ usable: 2 })).severity, 'normal');
    assert.equal(statusBarView(pool({ usable: 1 })).severity, 'warning');
    assert.equal(statusBarView(pool({ configured: 2, total: 2, usable: 1 })).severity, 'warning');
    assert.equal(statusBarView(pool({ configured: 2, total: 2, usable: 2 })).severity, 'normal');
  });

  it('is an error when none of the pool is usable, and shows no headroom then', () => {
    const none = statusBarView(pool({ usable: 0, bestHeadroom: null }));
    assert.equal(none.severity, 'error');
    assert.equal(none.text, '$(server-process) 0/3 usable');
    assert.equal(statusBarView(pool({ configured: 1, total: 1, usable: 0, bestHeadroom: null })).severity, 'error');
  });

  it('marks the simulated mode and leaves out an unknown headroom', () => {
    const v = statusBarView(pool({ bestHeadroom: null, simulated: true }));
    assert.equal(v.text, '$(server-process) 3/3 usable (simulated)');
    assert.match(v.ariaLabel, /^Claude Router \(simulated\): 3 of 3 accounts usable\./);
  });
});
