/**
 * The limit warm-up (docs/routing.md#limit-warm-up) against the fake upstream over real sockets:
 * when the usage endpoint shows that an opted-in account's 5-hour window has newly reset, the
 * router sends that account exactly one small request of its own and shows the result on it.
 */
import { strict as assert } from 'node:assert';
import type { StatusReport } from '../../src/proxy/status/status';
import { formatStatusTable } from '../../src/cli/statusCommand';
import { accountTooltip } from '../../src/proxy/status/tooltips';
import { WorkloadBuilder } from '../../src/whatif/reconstruct';
import { accounts, eventually, routerStatus, startHarness, type Harness } from '../support/routerHarness';

const HOUR_MS = 3_600_000;

describe('limit warm-up', function () {
  this.timeout(30_000);
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  /** Account `a`, its 5-hour window half used and resetting in 1 h, with `warm-up` as given; one shared clock moved by `advance`. */
  async function start(warmUp: boolean | undefined): Promise<{ harness: Harness; advance: (ms: number) => void }> {
    let offset = 0;
    const now = () => Date.now() + offset;
    const [a] = accounts('a');
    const harness = await startHarness([{ ...a, initialFiveHourUsed: 0.5, fiveHourResetInMs: HOUR_MS }], {
      now,
      sim: { now },
      configAccounts: [{ label: 'a', accessToken: a.accessToken, refreshToken: a.refreshToken, ...(warmUp === undefined ? {} : { warmUp }) }],
    });
    return { harness, advance: (ms) => (offset += ms) };
  }

  const messages = (x: Harness) => x.sim.requests.filter((r) => r.path.startsWith('/v1/messages'));

  it('with warm-up on, sends exactly one small request after a window reset, and its result, model and time show on the account', async () => {
    const { harness, advance } = await start(true);
    h = harness;
    await h.router.poller.tick();
    assert.equal((await routerStatus(h)).accounts[0].session.used, 0.5, 'the usage endpoint read the half-used window');
    assert.deepEqual(messages(h), [], 'no warm-up before a reset');

    advance(HOUR_MS + 60_000);
    await h.router.poller.tick();
    await eventually(async () => ((await routerStatus(h!)) as StatusReport).accounts[0].warmUp.last !== null, 5000, 'the warm-up on the account');
    const sent = messages(h);
    assert.equal(sent.length, 1, 'one warm-up request');
    assert.equal(sent[0].account, 'a');
    assert.equal(sent[0].model, 'claude-haiku-4-5');
    assert.equal(sent[0].status, 200);
    assert.ok(sent[0].bodyBytes < 200, `a small request (${sent[0].bodyBytes} bytes)`);

    const st = (await routerStatus(h)) as StatusReport;
    const w = st.accounts[0].warmUp;
    assert.equal(w.enabled, true);
    assert.deepEqual({ model: w.last!.model, window: w.last!.window, ok: w.last!.ok, status: w.last!.status }, { model: 'claude-haiku-4-5', window: '5h', ok: true, status: 200 });
    assert.ok(Math.abs(Date.parse(w.last!.at) - (Date.now() + HOUR_MS + 60_000)) < 10_000, `sent at the reset's time (${w.last!.at})`);
    const now = Date.now() + HOUR_MS + 60_000;
    assert.match(formatStatusTable(st, now), /warm-up ok \(claude-haiku-4-5, after the 5h reset, /, 'the CLI status shows it');
    const tooltip = accountTooltip(st.accounts[0], st, now);
    assert.ok(tooltip.includes('warm\\-up ok \\(claude\\-haiku\\-4\\-5\\, after the 5h reset'), `the Accounts view tooltip shows it: ${tooltip}`);

    // More evidence of the same new window is no new reset.
    advance(60_000);
    await h.router.poller.tick();
    await h.router.close();
    assert.equal(messages(h).length, 1, 'still one warm-up');

    const decisions = h.decisions();
    const marked = decisions.filter((d) => d.warmUp !== undefined);
    assert.equal(marked.length, 1, 'the warm-up is in the decision log');
    assert.deepEqual([marked[0].selectionReason, marked[0].servedBy, marked[0].warmUp], ['warm_up', 'a', { window: '5h' }]);
    const whatif = new WorkloadBuilder();
    for (const d of decisions) whatif.add(d);
    assert.throws(() => whatif.finish(), /no \/v1\/messages request/, 'the what-if reconstruction replays no warm-up');
  });

  it('with warm-up off (the default, or false), sends nothing after a window reset', async () => {
    for (const setting of [undefined, false]) {
      const { harness, advance } = await start(setting);
      h = harness;
      await h.router.poller.tick();
      advance(HOUR_MS + 60_000);
      await h.router.poller.tick();
      assert.equal(((await routerStatus(h)) as StatusReport).accounts[0].session.used, 0, 'the reset was read');
      await h.router.close();
      assert.deepEqual(messages(h), [], `warm-up ${String(setting)}: no request`);
      assert.equal(h.router.engine.state.warmUps.has('a'), false, 'nothing shows on the account');
      await h.close();
      h = undefined;
    }
  });
});
