/**
 * Accounts are not benched after they recover (issue 14, fault 5): usage-endpoint evidence that a
 * cooled window is allowed again re-validates or lifts the cooldown, restored cooldowns included;
 * a re-check is one real request, never more than one in flight per account, backing off when it
 * fails; a person can reset a cooldown. Real sockets against the fake upstream.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { startRouter, type RunningRouter } from '../../src/cli/runtime';
import { silentLogger } from '../../src/proxy/log';
import { accountDescription } from '../../src/proxy/status/statusView';
import { startFakeUpstream, type FakeUpstream } from '../../src/sim';
import { accounts, callRouter, eventually, messagesBody, routerStatus, startHarness, type Harness } from '../support/routerHarness';

const DAY = 86_400_000;
const messageRequests = (sim: FakeUpstream, label: string) => sim.requests.filter((q) => q.path.startsWith('/v1/messages?') && q.account === label);
const accountOf = async (h: Pick<Harness, 'router'>, label: string) => (await routerStatus(h)).accounts.find((x: any) => x.label === label);

/** `a` ranks first (the soonest weekly reset), `b` second. */
const specs = () => [
  { ...accounts('a')[0], sevenDayResetInMs: DAY, initialSevenDayUsed: 0.5 },
  { ...accounts('b')[0], sevenDayResetInMs: 3 * DAY, initialSevenDayUsed: 0.1 },
];

/** Cools `a` for its weekly window (reset 3 days away) through a real 429, then lets the upstream reset it early. */
async function coolThenResetEarly(h: Harness): Promise<void> {
  h.sim.injectFault('a', { kind: 'exhaust', window: '7d', resetInMs: 3 * DAY });
  const r = await callRouter(h, { session: 'cools-a' });
  assert.equal(r.headers['x-claude-router-account'], 'b');
  assert.equal((await accountOf(h, 'a')).coolingReason, 'window_exhausted');
  h.sim.clearFaults('a'); // the upstream resets the weekly window early
}

describe('recovery: no account benched after it recovered', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('an account whose usage endpoint reports allowed after its cooldown began serves again without a restart', async () => {
    h = await startHarness(specs(), { routing: { sessionAffinity: true } });
    await coolThenResetEarly(h);
    await h.router.poller.tick(); // the cooled account earns no header evidence: the poller reads it
    const before = await accountOf(h, 'a');
    assert.equal(before.evidence.source, 'usage');
    assert.equal(before.recheck?.state, 'due');
    assert.deepEqual(before.eligibility, { code: 'recovery_probe', untilMs: Date.parse(before.coolingUntil) });
    assert.match(accountDescription(before, Date.now()), /^5h 0% · 7d 50% · cooling 3 d \(7d window exhausted; reads recovered — re-checked by the next new request\)$/);

    const r = await callRouter(h, { session: 'new-session' });
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-claude-router-account'], 'a', 'the next new request re-checks the account, and it serves');
    const after = await accountOf(h, 'a');
    assert.equal(after.coolingUntil, null);
    assert.equal(after.usable, true);
    assert.equal(after.recheck, null);
    assert.equal((await callRouter(h, { session: 'another' })).headers['x-claude-router-account'], 'a', 'it ranks first again');

    await h.router.close();
    const probe = h.decisions().find((d) => d.probe?.kind === 'recovery');
    assert.ok(probe, 'the decision record names the probe');
    assert.deepEqual(probe.probe, { account: 'a', kind: 'recovery' });
    assert.equal(probe.selectionReason, 'recovery_probe');
    assert.equal(probe.decidedBy, 'modify');
    assert.equal(probe.servedBy, 'a');
  });

  it('a bound session is never the probe: it stays on its account', async () => {
    h = await startHarness(specs(), { routing: { sessionAffinity: true } });
    await coolThenResetEarly(h);
    await h.router.poller.tick();
    const r = await callRouter(h, { session: 'cools-a' }); // bound to b by the request that cooled a
    assert.equal(r.headers['x-claude-router-account'], 'b');
    assert.equal(messageRequests(h.sim, 'a').length, 1, 'only the request that cooled it reached a');
    assert.equal((await accountOf(h, 'a')).recheck?.state, 'due', 'still due for the next new request');
  });

  it('usage evidence read past the endpoint’s lag lifts the window cooldown by itself', async () => {
    let t = Date.now();
    const now = () => t;
    h = await startHarness(specs(), { now, sim: { now } });
    await coolThenResetEarly(h);
    t += 6 * 60_000; // past the 5-minute lag the usage endpoint is allowed
    await h.router.poller.tick();
    const a = await accountOf(h, 'a');
    assert.equal(a.coolingUntil, null, 'lifted by the reading, before any request');
    assert.equal(a.usable, true);
    assert.equal(messageRequests(h.sim, 'a').length, 1);
  });

  it('at most one re-check is in flight per account', async () => {
    h = await startHarness(specs(), { routing: { sessionAffinity: true } });
    await coolThenResetEarly(h);
    await h.router.poller.tick();
    h.sim.injectFault('a', { kind: 'slow_first_byte', delayMs: 600 });
    const results = await Promise.all([0, 1, 2, 3, 4].map((i) => callRouter(h!, { session: `burst-${i}` })));
    assert.ok(
      results.every((r) => r.status === 200),
      results.map((r) => r.status).join(),
    );
    assert.equal(messageRequests(h.sim, 'a').length - 1, 1, 'one request re-checked a while the others went elsewhere');
    assert.deepEqual(results.map((r) => r.headers['x-claude-router-account']).sort(), ['a', 'b', 'b', 'b', 'b']);
    assert.equal((await accountOf(h, 'a')).coolingUntil, null, 'the re-check succeeded');
  });

  it('a failed re-check backs the next one off and says when', async () => {
    h = await startHarness(specs(), { routing: { sessionAffinity: true } });
    await coolThenResetEarly(h);
    await h.router.poller.tick();
    h.sim.injectFault('a', { kind: 'exhaust', window: '7d', resetInMs: 3 * DAY }); // the reading lagged: the limiter still rejects
    const first = await callRouter(h, { session: 'probe-1' });
    assert.equal(first.status, 200, 'the client never sees the failed re-check');
    assert.equal(first.headers['x-claude-router-account'], 'b');
    assert.equal(messageRequests(h.sim, 'a').length, 2, 'the re-check reached a once');
    for (let i = 0; i < 5; i++) assert.equal((await callRouter(h, { session: `later-${i}` })).headers['x-claude-router-account'], 'b');
    assert.equal(messageRequests(h.sim, 'a').length, 2, 'no further re-check while backing off');
    const a = await accountOf(h, 'a');
    assert.equal(a.recheck?.state, 'backing_off');
    assert.ok(Math.abs(Date.parse(a.recheck.nextAt) - (Date.now() + 60_000)) < 5_000, `next re-check ${a.recheck.nextAt}`);
    // The 3-day cooldown counts down from the fault (whole seconds, truncated): "2 d 23 h" once over a second has passed on a loaded machine.
    assert.match(accountDescription(a, Date.now()), /cooling (3 d|2 d 23 h) \(7d window exhausted; a re-check failed, next in (5\d s|1 min)\)$/);
  });

  it('a cooldown restored from disk is re-validated after the restart', async () => {
    const sim = await startFakeUpstream({ accounts: specs() });
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'router-recovery-'));
    const config = {
      listen: { host: '127.0.0.1' as const, port: 0 },
      upstream: { baseUrl: sim.url, tokenUrl: sim.tokenUrl },
      stateDir,
      clientKey: 'recovery-key-0123456789',
      accounts: specs().map((a) => ({ label: a.label, accessToken: a.accessToken, refreshToken: a.refreshToken })),
    };
    let first: RunningRouter | undefined;
    let second: RunningRouter | undefined;
    try {
      first = await startRouter({ config, log: silentLogger, pollUsage: false });
      sim.injectFault('a', { kind: 'exhaust', window: '7d', resetInMs: 3 * DAY });
      assert.equal((await callRouter({ router: first }, { session: 's1' })).headers['x-claude-router-account'], 'b');
      await first.close();
      sim.clearFaults('a'); // reset early while the router was down

      second = await startRouter({ config, log: silentLogger }); // polls as a started router does
      const h2 = { router: second } as Harness;
      assert.equal((await accountOf(h2, 'a')).coolingReason, 'window_exhausted', 'the cooldown was restored');
      await eventually(async () => (await accountOf(h2, 'a')).evidence.source === 'usage', 5_000, 'the restored account read at start');
      const r = await callRouter(h2, { session: 's2' });
      assert.equal(r.headers['x-claude-router-account'], 'a');
      assert.equal((await accountOf(h2, 'a')).coolingUntil, null);
    } finally {
      await first?.close();
      await second?.close();
      await sim.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  it('Reset Cooldown: POST /accounts/<label>/reset-cooldown lifts the cooldown and the evidence that showed it exhausted', async () => {
    h = await startHarness(specs(), { routing: { sessionAffinity: true } });
    h.sim.injectFault('a', { kind: 'exhaust', window: '7d', resetInMs: 3 * DAY });
    await callRouter(h, { session: 's1' });
    h.sim.clearFaults('a');
    const post = (label: string, key: string | null = h!.router.clientKey) =>
      request(`${h!.router.url}/accounts/${encodeURIComponent(label)}/reset-cooldown`, { method: 'POST', headers: key ? { 'x-claude-router-key': key } : {} });

    const refused = await post('a', null);
    assert.equal(refused.statusCode, 401, 'only with the local key');
    await refused.body.text();
    assert.equal((await accountOf(h, 'a')).coolingReason, 'window_exhausted');

    const unknown = await post('nobody');
    assert.equal(unknown.statusCode, 404);
    assert.match(((await unknown.body.json()) as any).error.message, /no account is named "nobody"/);

    const res = await post('a');
    assert.equal(res.statusCode, 200);
    const body = (await res.body.json()) as any;
    assert.equal(body.account, 'a');
    assert.equal(body.cooldown, 'window_exhausted');
    assert.ok(Math.abs(Date.parse(body.cooldownUntil) - (Date.now() + 3 * DAY)) < 60_000);
    assert.equal(body.droppedEvidence, true, 'the snapshot that showed 7d rejected is read afresh');
    const a = await accountOf(h, 'a');
    assert.equal(a.coolingUntil, null);
    assert.equal(a.usable, true);
    assert.equal(a.evidence.freshness, 'unknown');
    await h.router.poller.tick(); // its quota is read afresh
    assert.equal((await callRouter(h, { session: 's2', body: messagesBody() })).headers['x-claude-router-account'], 'a', 'it serves again, first in the ranking');
  });
});
