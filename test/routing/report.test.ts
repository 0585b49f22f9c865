import { strict as assert } from 'node:assert';
import type { DecisionRecord, RecordedCandidate } from '../../src/routing/decision';
import type { FilterVerdict } from '../../src/routing/planner/verdict';
import { computeReport, formatReport } from '../../src/routing/report';

/** A served session request at `atS` seconds; `left` is the verdict the plan gave the other account. */
function served(atS: number, by: string, other: { account: string; filter: FilterVerdict }, attempts: DecisionRecord['attempts'] = []): DecisionRecord {
  const candidate = (account: string, filter: FilterVerdict) => ({ account, filter }) as unknown as RecordedCandidate;
  return {
    ts: new Date(Date.UTC(2026, 0, 1, 12, 0, atS)).toISOString(),
    path: '/v1/messages',
    stickyKeyHash: '0123456789abcdef',
    servedBy: by,
    servedByFallback: false,
    selectionReason: 'session_affinity',
    outcome: 'success',
    usableAccounts: 2,
    usage: null,
    candidates: [candidate(by, { code: 'eligible' }), candidate(other.account, other.filter)],
    attempts: [...attempts, { account: by, status: 200, result: 'success', ms: 1 }],
  } as unknown as DecisionRecord;
}

describe('routing/report: switches forced by quota or sign-in', () => {
  it('counts a switch as forced only when the account the session left could not keep it for quota or sign-in', () => {
    const eligible: FilterVerdict = { code: 'eligible' };
    const report = computeReport([
      served(0, 'a', { account: 'b', filter: eligible }),
      // a throttle: unforced
      served(10, 'b', { account: 'a', filter: { code: 'cooling', reason: 'throttle', untilMs: 0 } }),
      // b's window ran out (its attempt said so): forced
      served(20, 'a', { account: 'b', filter: eligible }, [{ account: 'b', status: 429, result: 'window_exhausted', ms: 1 }]),
      // a at the soft limit: forced
      served(30, 'b', { account: 'a', filter: { code: 'soft_limit', used: 0.98, resetMs: null } }),
      // b needs sign-in: forced
      served(40, 'a', { account: 'b', filter: { code: 'needs_sign_in' } }),
      // a network failure on a: unforced
      served(50, 'b', { account: 'a', filter: eligible }, [{ account: 'a', status: 0, result: 'network_error', ms: 1 }]),
    ]);
    assert.equal(report.midSessionSwitches, 5);
    assert.equal(report.unforcedSwitches, 2);
    assert.match(formatReport(report), /^mid-session switches not forced by quota or sign-in: 2$/m);
  });
});

describe('routing/report: counts by a recorded name', () => {
  it('counts outcomes and reasons named like Object members (constructor, __proto__, toString) as any other', () => {
    const eligible: FilterVerdict = { code: 'eligible' };
    const named = (atS: number, outcome: string, selectionReason: string) =>
      ({ ...served(atS, 'a', { account: 'b', filter: eligible }), outcome, selectionReason }) as unknown as DecisionRecord;
    const report = computeReport([named(0, 'constructor', '__proto__'), named(1, '__proto__', 'toString'), named(2, '__proto__', '__proto__'), named(3, 'success', 'constructor')]);
    assert.deepEqual(Object.entries(report.byOutcome), [
      ['constructor', 1],
      ['__proto__', 2],
      ['success', 1],
    ]);
    assert.deepEqual(Object.entries(report.bySelectionReason), [
      ['__proto__', 2],
      ['toString', 1],
      ['constructor', 1],
    ]);
    const text = formatReport(report);
    assert.match(text, /^ {2}constructor: 1$/m);
    assert.match(text, /^ {2}__proto__: 2$/m);
    assert.doesNotMatch(text, /native code/);
    assert.equal((JSON.parse(JSON.stringify(report)) as { byOutcome: Record<string, number> }).byOutcome.__proto__, 2);
  });
});
