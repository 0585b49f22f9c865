/**
 * A herd through the BUILT CLI (`node dist/cli.js start`) against the fake upstream: twenty sessions
 * bound to one account, whose next plain 200 answer reveals that its weekly window is rejected.
 * The next twenty requests must not reach the account they move to all at once: it throttles above
 * two in flight, and before the admission ramp covered this case it answered twenty 429s and sent
 * the whole herd on again (issue: "a herd when a plain answer reveals the switch").
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { startFakeUpstream, type FakeUpstream, type SimRequestRecord } from '../../src/sim';
import { accounts, eventually, messagesBody } from '../support/routerHarness';
import { proxyConfigYaml, startRouterCli, type CliProcess } from '../support/routerCli';

const KEY = 'herd-cli-key-0123456789';
const SESSIONS = Array.from({ length: 20 }, (_, i) => `herd-cli-${i}`);
const LABELS = ['a', 'b', 'c', 'd'];

describe('e2e: a herd revealed by a plain answer ramps onto the accounts it moves to', function () {
  this.timeout(90_000);
  let sim: FakeUpstream;
  let dir: string;
  let proc: CliProcess | undefined;
  let url: string;

  afterEach(async () => {
    await proc?.stop();
    proc = undefined;
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function start(routing: string): Promise<void> {
    // a's weekly window resets first, so expiry-first places every new session there.
    const spec = accounts(...LABELS).map((a, i) => ({ ...a, sevenDayResetInMs: (i + 1) * 86_400_000 }));
    sim = await startFakeUpstream({ accounts: spec, sseIntervalMs: 10 });
    dir = mkdtempSync(path.join(os.tmpdir(), 'herd-cli-'));
    const file = path.join(dir, 'proxy-config.yaml');
    writeFileSync(
      file,
      proxyConfigYaml({
        port: 0,
        baseUrl: sim.url,
        tokenUrl: sim.tokenUrl,
        stateDir: path.join(dir, 'state'),
        clientKey: KEY,
        accounts: spec.map((a) => ({ label: a.label, accessToken: a.accessToken, refreshToken: a.refreshToken })),
        extra: routing,
      }),
    );
    const started = await startRouterCli(file);
    proc = started.proc;
    url = started.url;
    // The start-up usage sweep reads every account (an account without evidence would take an evidence probe).
    await eventually(async () => (await status()).accounts.every((a: any) => a.session.utilization !== null), 15_000, 'every account read');
  }

  async function status(): Promise<any> {
    const res = await request(`${url}/status`, { headers: { 'x-claude-router-key': KEY } });
    return res.body.json();
  }

  async function call(session: string): Promise<{ status: number; account: string }> {
    const res = await request(`${url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-claude-code-session-id': session },
      body: messagesBody({ stream: true }),
    });
    await res.body.text();
    return { status: res.statusCode, account: String(res.headers['x-claude-router-account'] ?? '') };
  }

  /** The Messages requests `label` received from index `since` of the sim's record on, in arrival order. */
  function arrivals(label: string, since: number): SimRequestRecord[] {
    return sim.requests
      .slice(since)
      .filter((r) => r.account === label && r.path.startsWith('/v1/messages'))
      .sort((x, y) => x.seq! - y.seq!);
  }

  for (const [what, routing] of [
    ['session affinity', 'routing:\n  session-affinity: true\n'],
    ['session affinity and spill-inflight 2', 'routing:\n  session-affinity: true\n  spill-inflight: 2\n'],
  ] as const) {
    it(`${what}: twenty sessions leave a; no account they move to gets more than it can take before its first answer, and every request is served`, async () => {
      await start(routing);
      for (const s of SESSIONS) assert.equal((await call(s)).account, 'a', 'every session opens on a');
      // b throttles above two in flight; every account answers slowly enough for the whole herd to arrive.
      sim.setConcurrencyLimit('b', 2);
      for (const l of ['b', 'c', 'd']) sim.injectFault(l, { kind: 'slow_first_byte', delayMs: 300 }, SESSIONS.length);
      // a's next answer is a plain 200 whose headers say its weekly window is rejected.
      sim.injectFault('a', { kind: 'exhaust_after_answer', window: '7d', resetInMs: 3 * 86_400_000 });
      const revealing = await call(SESSIONS[0]);
      assert.deepEqual(revealing, { status: 200, account: 'a' });
      await eventually(async () => (await status()).accounts[0].usable === false, 5_000, 'a to read unusable');

      const since = sim.requests.length;
      const results = await Promise.all(SESSIONS.map(call));
      for (const r of results) assert.equal(r.status, 200, `every request served (${JSON.stringify(results)})`);
      assert.ok(
        results.every((r) => r.account !== 'a'),
        'no request went back to a',
      );
      for (const l of ['b', 'c', 'd']) {
        const got = arrivals(l, since);
        if (got.length === 0) continue;
        const firstAnswer = Math.min(...got.map((r) => r.answeredAfter ?? Infinity));
        const beforeFirst = got.filter((r) => r.seq! <= firstAnswer).length;
        assert.equal(beforeFirst, 1, `${l} received its first request alone (it had ${beforeFirst} before its first answer)`);
      }
      const onB = arrivals('b', since);
      const throttled = onB.filter((r) => r.status === 429).length;
      assert.ok(throttled <= 2, `b throttled ${throttled} of the ${onB.length} requests it received (only the ramp's probes past its limit of 2 may meet it)`);
    });
  }
});
