/**
 * `/status` says where a new session of each model family goes when a model-scoped limit sends it
 * elsewhere than a new request of the working model: the Accounts view and `status` show it.
 */
import { strict as assert } from 'node:assert';
import { formatStatusTable } from '../../../src/cli/statusCommand';
import type { StatusReport } from '../../../src/proxy/status/status';
import { accounts, callRouter, messagesBody, routerStatus, startHarness, type Harness } from '../../support/routerHarness';

describe('status: where a new session of each model family goes', () => {
  let h: Harness;
  before(async () => {
    const [a, b] = accounts('a', 'b');
    // a's weekly Opus window is used up; its other windows are fine.
    h = await startHarness([{ ...a, scopedWindows: { opus: { limitTokens: 1_000, initialUsed: 1_000 } } }, b]);
  });
  after(() => h.close());

  it('a family whose scoped window sends its new sessions to another account is named, with that account', async () => {
    assert.equal((await callRouter(h, { session: 'sonnet-session', body: messagesBody({ model: 'claude-sonnet-4-5' }) })).status, 200);
    // a refuses Opus (its scoped window): b serves it.
    assert.equal((await callRouter(h, { session: 'opus-session', body: messagesBody({ model: 'claude-opus-4-1' }) })).status, 200);
    const s = (await routerStatus(h)) as StatusReport;
    const selected = (p: StatusReport['preview']) => p.verdicts.find((v) => v.verdict === 'selected')?.account;
    assert.equal(selected(s.preview), 'a', 'a model-less request still goes to a');
    assert.deepEqual(Object.keys(s.familyPreviews ?? {}), ['opus']);
    assert.equal(selected(s.familyPreviews!.opus), 'b');
    assert.match(formatStatusTable(s, Date.now()), /^ {2}a new opus session would go to b: /m);
  });

  it('no family is named while every family goes where a new request goes', async () => {
    const h2 = await startHarness(accounts('a', 'b'));
    try {
      await callRouter(h2, { body: messagesBody({ model: 'claude-opus-4-1' }) });
      const s = (await routerStatus(h2)) as StatusReport;
      assert.deepEqual(s.familyPreviews, {});
      assert.doesNotMatch(formatStatusTable(s, Date.now()), /a new \w+ session would go to/);
    } finally {
      await h2.close();
    }
  });
});
