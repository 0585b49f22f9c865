/**
 * "A new request would go here" for the model the user's Claude Code works with: `/status?model=`
 * counts that model's scoped weekly window, and the views ask for the model of the latest
 * non-background request.
 */
import { strict as assert } from 'node:assert';
import { workingModel } from '../../../src/proxy/status/workingModel';
import { accounts, callRouter, messagesBody, startHarness, type Harness } from '../../support/routerHarness';
import { request } from 'undici';

describe('the preview for the model in use', () => {
  let h: Harness;
  afterEach(() => h?.close());

  async function status(query = ''): Promise<any> {
    const res = await request(`${h.router.url}/status${query}`, { headers: { 'x-claude-router-key': h.router.clientKey } });
    return res.body.json();
  }
  const next = (s: any) => s.preview.verdicts.find((v: any) => v.verdict === 'selected')?.account;

  it('with the sonnet window of "a" used up, a sonnet request would go to "b" although a model-less one would go to "a"', async () => {
    const spec = accounts('a', 'b').map((x, i) => ({ ...x, sevenDayResetInMs: (1 + 2 * i) * 86_400_000, scopedWindows: { sonnet: { limitTokens: 1_000_000 } } }));
    h = await startHarness(spec);
    h.sim.injectFault('a', { kind: 'exhaust', window: '7d_sonnet', resetInMs: 2 * 86_400_000 });
    // Claude Code's requests: the main model, and a background one to Haiku.
    await callRouter(h, { session: 's1', body: messagesBody({ model: 'claude-sonnet-4-5-20250929' }) });
    await callRouter(h, { session: 's1', body: messagesBody({ model: 'claude-haiku-4-5-20251001' }) });
    assert.equal(next(await status()), 'a', 'a model-less preview marks the account the user will not get');
    const model = workingModel(h.router.engine.recentDecisions(200));
    assert.equal(model, 'claude-sonnet-4-5-20250929', 'the working model, not the background Haiku');
    const s = await status(`?model=${encodeURIComponent(model)}`);
    assert.equal(next(s), 'b');
    const a = s.accounts.find((x: any) => x.label === 'a');
    assert.equal(a.eligibility.code, 'scoped_exhausted');
    assert.equal((await callRouter(h, { session: 's2', body: messagesBody({ model: model }) })).headers['x-claude-router-account'], 'b', 'where the next request really goes');
  });

  it('without decisions there is no working model; only Haiku requests make Haiku the one', () => {
    assert.equal(workingModel([]), null);
    const d = (model: string | null, path = '/v1/messages') => ({ model, path }) as any;
    assert.equal(workingModel([d('claude-haiku-4-5'), d(null), d('claude-haiku-4-5', '/v1/messages/count_tokens')]), 'claude-haiku-4-5');
    assert.equal(workingModel([d('claude-opus-4-1'), d('claude-haiku-4-5')]), 'claude-opus-4-1');
  });
});
