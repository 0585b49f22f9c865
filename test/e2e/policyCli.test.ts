/**
 * Routing policies through the BUILT CLI (`node dist/cli.js start`) against
 * the fake upstream: effective values in /status, rejected reloads keep the
 * last good policy, hot reload, and a burst of new sessions with spill.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { startFakeUpstream, type FakeUpstream } from '../../src/sim';
import { accounts, eventually } from '../support/routerHarness';
import { proxyConfigYaml, startRouterCli, type CliProcess } from '../support/routerCli';

const KEY = 'policy-cli-key-0123456789';

describe('routing policies through the built CLI', function () {
  this.timeout(60_000);
  let sim: FakeUpstream;
  let dir: string;
  let file: string;
  let proc: CliProcess | undefined;
  let url: string;

  const yaml = (extra: string) =>
    proxyConfigYaml({
      port: 0,
      baseUrl: sim.url,
      tokenUrl: sim.tokenUrl,
      stateDir: path.join(dir, 'state'),
      clientKey: KEY,
      accounts: accounts('a', 'b', 'c').map((a) => ({ label: a.label, accessToken: a.accessToken, refreshToken: a.refreshToken })),
      extra,
    });

  async function status(): Promise<any> {
    const res = await request(`${url}/status`, { headers: { 'x-claude-router-key': KEY } });
    return res.body.json();
  }

  async function start(extra: string, simOpts: Parameters<typeof startFakeUpstream>[0] extends infer O ? Partial<O> : never = {}) {
    sim = await startFakeUpstream({ accounts: accounts('a', 'b', 'c'), ...simOpts });
    dir = mkdtempSync(path.join(os.tmpdir(), 'policy-cli-'));
    file = path.join(dir, 'proxy-config.yaml');
    writeFileSync(file, yaml(extra));
    const started = await startRouterCli(file);
    proc = started.proc;
    url = started.url;
  }

  afterEach(async () => {
    await proc?.stop();
    proc = undefined;
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('shows every routing key of a throwaway config in /status, with its source', async () => {
    await start(
      [
        'routing:',
        '  strategy: fill-first',
        '  account-ranking: headroom-first',
        '  prefer-primary: true',
        '  primary-account: b',
        '  session-affinity: true',
        '  session-affinity-idle-ttl-ms: 120000',
        '  spill-inflight: 7',
        '  max-inflight-per-account: 9',
        '  session-soft-limit: 0.9',
        '  session-reset-tolerance-ms: 600000',
        '  allowOverage: true',
        '  session-fingerprint: false',
        '  max-buffered-body-bytes: 134217728',
        '  relative-availability-top-k: 3',
        '  relative-availability-power: 1.5',
        '  single-account-label: c',
        '  weighted-preset: least-loaded',
        '  weights:',
        '    load: 0.6',
        '  sticky-threshold-5h: 90',
        '  sticky-threshold-7d: 70',
        '  inflight-penalty-pct: 5',
        '  prefer-earlier-reset: true',
        '  max-waiting-requests: 12',
        '  session-affinity-rebind: on-quota',
        '  session-affinity-blip-wait-ms: 1500',
        '  transient-wait-max-ms: 30000',
        '  queue-wait-max-ms: 30000',
        '  admission-ramp: false',
        '  cost-lease-margin: 1.3',
        '  warm-up-model: claude-3-5-haiku',
        '  client-retry-horizon-ms: 300000',
        '  grant-warn-days: 14',
      ].join('\n'),
    );
    const st = await status();
    assert.deepEqual(
      { ...st.policy },
      {
        strategy: 'fill-first',
        accountRanking: 'headroom-first',
        preferPrimary: true,
        primaryAccount: 'b',
        sessionAffinity: true,
        sessionAffinityIdleTtlMs: 120000,
        spillInflight: 7,
        maxInflightPerAccount: 9,
        sessionSoftLimit: 0.9,
        sessionResetToleranceMs: 600000,
        allowOverage: true,
        quotaRouting: true,
        sessionFingerprint: false,
        maxBufferedBodyBytes: 134217728,
        relativeAvailabilityTopK: 3,
        relativeAvailabilityPower: 1.5,
        singleAccountLabel: 'c',
        weightedPreset: 'least-loaded',
        weights: { load: 0.6 },
        stickyThreshold5h: 90,
        stickyThreshold7d: 70,
        inflightPenaltyPct: 5,
        preferEarlierReset: true,
        maxWaitingRequests: 12,
        sessionAffinityRebind: 'on-quota',
        sessionAffinityBlipWaitMs: 1500,
        transientWaitMaxMs: 30000,
        queueWaitMaxMs: 30000,
        admissionRamp: false,
        costLeaseMargin: 1.3,
        warmUpModel: 'claude-3-5-haiku',
        clientRetryHorizonMs: 300000,
        grantWarnDays: 14,
      },
    );
    assert.equal(st.config.sources['spill-inflight'], file);
    assert.equal(st.config.sources['sticky-threshold-7d'], file);
    assert.equal(st.config.sources['quota-routing'], 'default');
    assert.equal(st.accounts.find((a: any) => a.label === 'b').primary, true);
  });

  it('hot-reloads an edited file within 2 s, and rejects an invalid edit keeping the last good policy', async () => {
    await start('routing:\n  account-ranking: expiry-first\n');
    const before = await status();
    assert.equal(before.config.generation, 1);

    writeFileSync(file, yaml('routing:\n  account-ranking: headroom-first\n  session-affinity: true\n'));
    const t0 = Date.now();
    await eventually(async () => (await status()).policy.accountRanking === 'headroom-first', 4000, 'hot reload');
    assert.ok(Date.now() - t0 < 2500, `reloaded in ${Date.now() - t0} ms`);
    const reloaded = await status();
    assert.equal(reloaded.config.generation, 2);
    assert.equal(reloaded.policy.sessionAffinity, true);

    writeFileSync(file, yaml('routing:\n  account-ranking: fastest-first\n  spill-inflight: 500\n'));
    await eventually(async () => (await status()).config.lastReloadError !== null, 4000, 'rejected reload');
    const rejected = await status();
    assert.match(rejected.config.lastReloadError, /routing\.account-ranking/);
    assert.match(rejected.config.lastReloadError, /routing\.spill-inflight/);
    assert.equal(rejected.config.generation, 2, 'the running generation stays');
    assert.equal(rejected.policy.accountRanking, 'headroom-first', 'the last good policy stays active');
    // Requests still work under the kept policy.
    const ok = await request(`${url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-claude-router-key': KEY, 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-claude-code-session-id': 's' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(ok.statusCode, 200);
    await ok.body.text();

    // An editor that truncates the file before writing it: the empty moment is refused, every account stays.
    writeFileSync(file, '# nothing yet\n');
    await eventually(async () => /holds no settings/.test((await status()).config.lastReloadError ?? ''), 4000, 'empty file refused');
    const emptied = await status();
    assert.equal(emptied.config.generation, 2, 'the running generation stays');
    assert.ok(emptied.accounts.length > 0, 'no account was dropped');
  });

  it('switching strategy by editing the YAML takes effect within 2 s, shows in /status and routes the next request', async () => {
    await start('routing:\n  strategy: fill-first\n');
    const send = async () => {
      const res = await request(`${url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-claude-router-key': KEY, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
      });
      await res.body.text();
      return res.headers['x-claude-router-account'];
    };
    await send();
    writeFileSync(file, yaml('routing:\n  strategy: single-account\n  single-account-label: c\n'));
    const t0 = Date.now();
    await eventually(async () => (await status()).policy.strategy === 'single-account', 4000, 'strategy reload');
    assert.ok(Date.now() - t0 < 2500, `reloaded in ${Date.now() - t0} ms`);
    for (let i = 0; i < 3; i++) assert.equal(await send(), 'c');
    const st = await status();
    assert.deepEqual(
      st.preview.verdicts.map((v: { account: string }) => v.account),
      ['c'],
    );
  });

  it('a new client-key in the file takes effect on reload: the old key stops working', async () => {
    await start('');
    const probe = (key: string) => request(`${url}/status`, { headers: { 'x-claude-router-key': key } }).then(async (r) => (await r.body.text(), r.statusCode));
    assert.equal(await probe(KEY), 200);
    const NEW = 'policy-cli-rotated-key-987654321';
    writeFileSync(file, yaml('').replace(`client-key: "${KEY}"`, `client-key: "${NEW}"`));
    await eventually(async () => (await probe(NEW)) === 200, 4000, 'the new key');
    assert.equal(await probe(KEY), 401);
  });

  it('spreads a burst of 14 new sessions with spill-inflight and keeps each session where it landed', async () => {
    await start('routing:\n  session-affinity: true\n  spill-inflight: 5\n', { sseIntervalMs: 40, sseDeltaCount: 10 });
    const turn = async (session: string) => {
      const res = await request(`${url}/v1/messages?beta=true`, {
        method: 'POST',
        headers: { 'x-claude-router-key': KEY, 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-claude-code-session-id': session },
        body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 5, stream: true, messages: [{ role: 'user', content: `hi ${session}` }] }),
      });
      const text = await res.body.text();
      assert.equal(res.statusCode, 200);
      assert.match(text, /message_stop/);
      return res.headers['x-claude-router-account'] as string;
    };
    const sessions = Array.from({ length: 14 }, (_, i) => `burst-${i}`);
    const first = await Promise.all(sessions.map(turn));
    const perAccount = new Map<string, number>();
    for (const a of first) perAccount.set(a, (perAccount.get(a) ?? 0) + 1);
    assert.ok(perAccount.size >= 3, `spread over ${[...perAccount.keys()].join(',')}`);
    for (const n of perAccount.values()) assert.ok(n <= 5, `no account took more than the spill threshold (${JSON.stringify([...perAccount.entries()])})`);
    // Every session's next turns stay on the account it landed on, even in parallel.
    const second = await Promise.all(sessions.map(turn));
    const third = await Promise.all(sessions.map(turn));
    assert.deepEqual(second, first);
    assert.deepEqual(third, first);
    const st = await status();
    assert.equal(st.boundSessions, 14);
  });
});
