/**
 * A model-scoped rejection is remembered until its reset (issue 14): the upstream said the
 * account cannot serve that model family until a known time, so the router does not re-probe it
 * once the evidence is 15 minutes old, nor after a restart — while the account keeps serving other
 * models. Real sockets against the fake upstream, with one clock for the router and the upstream.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startRouter, type RunningRouter } from '../../src/cli/runtime';
import { silentLogger } from '../../src/proxy/log';
import { startFakeUpstream } from '../../src/sim';
import { accounts, callRouter, messagesBody, readDecisions, type Harness } from '../support/routerHarness';

const DAY = 86_400_000;
const SONNET = messagesBody({ model: 'claude-sonnet-4-5-20250929' });
const OPUS = messagesBody({ model: 'claude-opus-4-1-20250805' });

describe('model-scoped rejections are remembered until their reset', () => {
  it('a model-scoped rejection with a reset 3 days away is not forgotten after 15 minutes, nor by a restart', async () => {
    let t = Date.now();
    const now = () => t;
    const scopedWindows = { sonnet: { limitTokens: 1_000_000 }, opus: { limitTokens: 1_000_000 } };
    const spec = [
      { ...accounts('a')[0], sevenDayResetInMs: DAY, initialSevenDayUsed: 0.5, scopedWindows },
      { ...accounts('b')[0], sevenDayResetInMs: 3 * DAY, initialSevenDayUsed: 0.1, scopedWindows },
    ];
    const sim = await startFakeUpstream({ accounts: spec, now });
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'router-scoped-'));
    const config = {
      listen: { host: '127.0.0.1' as const, port: 0 },
      upstream: { baseUrl: sim.url, tokenUrl: sim.tokenUrl },
      stateDir,
      clientKey: 'scoped-key-0123456789',
      accounts: spec.map((a) => ({ label: a.label, accessToken: a.accessToken, refreshToken: a.refreshToken })),
    };
    const sonnetOnA = () => sim.requests.filter((q) => q.account === 'a' && q.path.startsWith('/v1/messages?') && q.model?.includes('sonnet')).length;
    let first: RunningRouter | undefined;
    let second: RunningRouter | undefined;
    try {
      first = await startRouter({ config, log: silentLogger, pollUsage: false, now });
      const h1 = { router: first } as Harness;
      sim.injectFault('a', { kind: 'exhaust', window: '7d_sonnet', resetInMs: 3 * DAY });
      assert.equal((await callRouter(h1, { session: 's1', body: SONNET })).headers['x-claude-router-account'], 'b');
      assert.equal(sonnetOnA(), 1);

      t += 16 * 60_000; // the rejection's evidence is stale now; its reset is still days away
      assert.equal((await callRouter(h1, { session: 's2', body: SONNET })).headers['x-claude-router-account'], 'b');
      assert.equal(sonnetOnA(), 1, 'not re-probed after 15 minutes');
      assert.equal((await callRouter(h1, { session: 's3', body: OPUS })).headers['x-claude-router-account'], 'a', 'the account still serves other models');
      await first.close();
      const record = readDecisions(stateDir).find((d) => d.model?.includes('sonnet') && d.candidates.some((c) => c.account === 'a' && c.filter?.code === 'scoped_exhausted'));
      assert.ok(record, 'the decision names the scoped window');
      const verdict = record.candidates.find((c) => c.account === 'a')!.filter as { code: string; family: string; resetMs: number };
      assert.equal(verdict.family, 'sonnet');
      assert.ok(Math.abs(verdict.resetMs - (t - 16 * 60_000 + 3 * DAY)) < 60_000, 'until the window resets');

      t += 60 * 60_000;
      second = await startRouter({ config, log: silentLogger, pollUsage: false, now });
      assert.equal((await callRouter({ router: second }, { session: 's4', body: SONNET })).headers['x-claude-router-account'], 'b');
      assert.equal(sonnetOnA(), 1, 'not re-probed after a restart either');
    } finally {
      await first?.close();
      await second?.close();
      await sim.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
