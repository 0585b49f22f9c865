/**
 * Token lifetimes through a running router (createRouter, the fake upstream, a test clock): each
 * OAuth account's grant age in `/status` and `claude-router status`, the warning at
 * `routing.grant-warn-days` (one alert per account and grant), and the needs-sign-in reason of an
 * `invalid_grant` on an old grant and on a young one.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { DAY_MS } from '../../../src/accounts/grant';
import { MemoryCredentialStore } from '../../../src/accounts/memoryCredentialStore';
import type { Credentials } from '../../../src/accounts/types';
import { formatStatusTable } from '../../../src/cli/statusCommand';
import { policyFrom, type RoutingInput } from '../../../src/config/schema';
import { createRouter, type Router } from '../../../src/proxy/createRouter';
import { silentLogger } from '../../../src/proxy/log';
import { AlertEpisodes } from '../../../src/proxy/status/alerts';
import { buildPanelData } from '../../../src/proxy/status/panelData';
import type { StatusReport } from '../../../src/proxy/status/status';
import { accountTooltip } from '../../../src/proxy/status/tooltips';
import { startFakeUpstream, type FakeUpstream } from '../../../src/sim';
import { messagesBody } from '../../support/routerHarness';

const T0 = Date.UTC(2026, 10, 1, 12);

/** The panel's data for `status` at `now` (no decisions, no history). */
const panelOf = (status: StatusReport, now: number) =>
  buildPanelData({
    now,
    status,
    decisions: [],
    error: undefined,
    role: 'leader',
    simulated: false,
    settingsError: null,
    previewModel: null,
    range: 'hour',
    history: [],
    browser: { records: [], next: null, loading: false, error: null },
  });

describe('token lifetimes: the grant age through a running router (test clock)', () => {
  let sim: FakeUpstream;
  let router: Router;
  let dir: string;
  /** The router's and the sim's clock, epoch ms. */
  let clock = T0;
  const now = () => clock;
  let store: MemoryCredentialStore;

  async function start(pairs: Record<string, Credentials>, routing?: RoutingInput, apiKey?: string): Promise<void> {
    clock = T0;
    sim = await startFakeUpstream({
      accounts: [
        ...Object.keys(pairs).map((label) => ({ label, accessToken: `sk-ant-oat01-sim-${label}`, refreshToken: `sk-ant-ort01-sim-${label}` })),
        ...(apiKey ? [{ label: apiKey, accessToken: 'sk-ant-api03-sim-key', apiKey: true }] : []),
      ],
      now,
    });
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-grant-'));
    store = new MemoryCredentialStore();
    for (const [label, c] of Object.entries(pairs)) await store.set(label, c);
    if (apiKey) await store.set(apiKey, { accessToken: 'sk-ant-api03-sim-key' });
    router = await createRouter({
      config: {
        policy: policyFrom(routing, {}),
        accounts: [
          ...Object.keys(pairs).map((label) => ({ label, kind: 'oauth' as const, fallback: false, enabled: true })),
          ...(apiKey ? [{ label: apiKey, kind: 'api_key' as const, fallback: true, enabled: true }] : []),
        ],
        upstreamBaseUrl: sim.url,
      },
      credentials: store,
      tokenUrl: sim.tokenUrl,
      clientKey: 'test-client-key-0123456789',
      log: silentLogger,
      decisionDir: dir,
      listen: { host: '127.0.0.1', port: 0 },
      now,
    });
    await router.tokens.readGrants([...Object.keys(pairs), ...(apiKey ? [apiKey] : [])]);
  }

  afterEach(async () => {
    await router?.close();
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const status = async (): Promise<StatusReport> =>
    (await request(`${router.server!.url}/status`, { headers: { 'x-claude-router-key': 'test-client-key-0123456789' } })).body.json() as Promise<StatusReport>;
  const account = (s: StatusReport, label: string) => s.accounts.find((a) => a.label === label)!;
  const pair = (label: string, grantedAtMs?: number): Credentials => ({
    accessToken: `sk-ant-oat01-sim-${label}`,
    refreshToken: `sk-ant-ort01-sim-${label}`,
    expiresAtMs: T0 + 8 * 3_600_000,
    grantedAtMs,
  });

  it('reports each grant age (days) in /status and the status table; unknown for older credentials, none for an API key', async () => {
    await start({ fresh: pair('fresh', T0 - 2 * 3_600_000), aged: pair('aged', T0 - 12 * DAY_MS), legacy: pair('legacy') }, undefined, 'key');
    const s = await status();
    assert.deepEqual(account(s, 'fresh').grant, { grantedAt: new Date(T0 - 2 * 3_600_000).toISOString(), ageDays: 0, warn: false });
    assert.deepEqual(account(s, 'aged').grant, { grantedAt: new Date(T0 - 12 * DAY_MS).toISOString(), ageDays: 12, warn: false });
    assert.deepEqual(account(s, 'legacy').grant, { grantedAt: null, ageDays: null, warn: false });
    assert.equal(account(s, 'key').grant, null);
    assert.equal(s.policy.grantWarnDays, 21);
    const table = formatStatusTable(s, T0);
    assert.match(table, /SIGNED IN/);
    assert.match(table, /aged\s.*\b12 d ago\b/);
    assert.match(table, /fresh\s.*\btoday\b/);
    assert.match(table, /legacy\s.*\bunknown\b/);
    assert.doesNotMatch(table, /sign-in:\n/, 'no grant is old enough to warn');
    assert.match(accountTooltip(account(s, 'aged'), s, T0), /signed in 12 d ago/);
    assert.match(accountTooltip(account(s, 'legacy'), s, T0), /grant age unknown/);
    const panel = panelOf(s, T0);
    assert.match(panel.accounts.find((a) => a.label === 'aged')!.statusLine, /signed in 12 d ago/);
    assert.doesNotMatch(JSON.stringify(s), /sk-ant-/, 'no token in the status');
  });

  it('warns past grant-warn-days: a status line and one alert per account and grant, not again after refreshes; a new sign-in is a new grant', async () => {
    await start({ a: pair('a', T0 - 20 * DAY_MS), b: pair('b', T0 - 5 * DAY_MS) });
    const alerts = new AlertEpisodes();
    assert.deepEqual(alerts.next(await status(), clock), [], 'day 20: not yet');
    clock = T0 + DAY_MS; // day 21 for a
    let s = await status();
    assert.deepEqual(account(s, 'a').grant, { grantedAt: new Date(T0 - 20 * DAY_MS).toISOString(), ageDays: 21, warn: true });
    assert.equal(account(s, 'b').grant?.warn, false);
    assert.deepEqual(alerts.next(s, clock), [{ kind: 'grant_old', label: 'a', ageDays: 21 }]);
    // A later run (the window reloaded) given what was warned about: not again.
    assert.deepEqual(new AlertEpisodes(alerts.warnedGrants()).next(s, clock), []);
    assert.doesNotMatch(JSON.stringify(alerts.warnedGrants()), /sk-ant-/);
    assert.match(formatStatusTable(s, clock), /sign-in:\n\s+a\s+signed in 21 d ago: sign in again soon/);
    const panel = panelOf(s, clock);
    assert.deepEqual(panel.accounts.find((x) => x.label === 'a')!.warnings, [
      'Signed in 21 d ago: sign in again soon (the refresh chain reportedly ends about 28–29 days after sign-in)',
    ]);
    // Refreshes (the access token expired; the sim rotates the pair) keep the grant: no second alert.
    clock += 9 * 3_600_000;
    const res = await request(`${router.server!.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-claude-router-key': 'test-client-key-0123456789', 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: messagesBody(),
    });
    assert.equal(res.statusCode, 200);
    await res.body.text();
    assert.equal(sim.refreshCount('a') + sim.refreshCount('b'), 1, 'one refresh');
    s = await status();
    assert.equal(account(s, 'a').grant?.grantedAt, new Date(T0 - 20 * DAY_MS).toISOString());
    assert.deepEqual(alerts.next(s, clock), [], 'once per grant, not on every refresh');
    // Day 5 + 21 for b: its own alert, once.
    clock = T0 + 16 * DAY_MS;
    assert.deepEqual(
      alerts.next(await status(), clock).map((x) => x.kind === 'grant_old' && x.label),
      ['b'],
    );
    // A new sign-in of a: a new grant, no warning; past the threshold again, a new alert.
    await store.set('a', pair('a', clock));
    router.tokens.invalidate('a');
    await new Promise((r) => setImmediate(r));
    assert.equal(account(await status(), 'a').grant?.warn, false);
    clock += 21 * DAY_MS;
    assert.deepEqual(
      alerts.next(await status(), clock).map((x) => x.kind === 'grant_old' && x.label),
      ['a'],
    );
  });

  it('grant-warn-days is a routing key (0: off)', async () => {
    await start({ a: pair('a', T0 - 100 * DAY_MS) }, { grantWarnDays: 0 });
    const s = await status();
    assert.equal(account(s, 'a').grant?.ageDays, 100);
    assert.equal(account(s, 'a').grant?.warn, false);
    assert.deepEqual(new AlertEpisodes().next(s, clock), []);
  });

  it('an invalid_grant on an old grant needs sign-in as the likely end of the refresh chain; on a young grant only as a refusal; the pairs are kept', async () => {
    // Expired access tokens whose refresh tokens the token endpoint does not know: invalid_grant.
    const dead = (label: string, grantedAtMs: number): Credentials => ({
      accessToken: `sk-ant-oat01-expired-${label}`,
      refreshToken: `sk-ant-ort01-dead-${label}`,
      expiresAtMs: T0 - 1,
      grantedAtMs,
    });
    await start({ old: dead('old', T0 - 28 * DAY_MS), young: dead('young', T0 - 3 * DAY_MS), spare: pair('spare', T0) }, { strategy: 'round-robin' });
    for (let i = 0; i < 3; i++) {
      const res = await request(`${router.server!.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-claude-router-key': 'test-client-key-0123456789', 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: messagesBody(),
      });
      await res.body.text();
    }
    const s = await status();
    assert.equal(account(s, 'old').needsSignIn, true);
    assert.match(account(s, 'old').needsSignInReason!, /invalid_grant.*signed in 28 d ago: likely the end of its refresh chain .*sign in again/);
    assert.equal(account(s, 'young').needsSignIn, true);
    assert.equal(account(s, 'young').needsSignInReason, 'refresh token was rejected (invalid_grant)');
    assert.doesNotMatch(JSON.stringify(s), /sk-ant-/);
    assert.equal((await store.get('old'))?.refreshToken, 'sk-ant-ort01-dead-old', 'a failed refresh never discards a token');
    assert.equal((await store.get('young'))?.grantedAtMs, T0 - 3 * DAY_MS);
  });
});
