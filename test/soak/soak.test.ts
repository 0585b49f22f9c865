/**
 * Load with faults: hundreds of concurrent simulated Claude Code sessions for
 * a bounded time against the fake upstream, with random faults of every kind
 * it can script — concurrency throttles on random accounts and a herd (the
 * account holding sessions exhausted for a few seconds) among them — some
 * large bodies and random client aborts. Checks the invariants a user relies
 * on (the waiting room within its bound throughout) and prints the counts. It runs once against
 * one router and once against two routers sharing a Redis store (docs/shared-pool.md), where
 * each session stays on one router but every tenth moves between them at every turn, and no
 * refresh token may be sent after another refresh spent it.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { startFakeUpstream, type FakeUpstream, type SimFault } from '../../src/sim';
import { startRouter, type RunningRouter } from '../../src/cli/runtime';
import type { Logger } from '../../src/proxy/log';
import { open } from '../../src/store/encryption';
import { storeKeys } from '../../src/store/keys';
import { accounts, callRouter, eventually, readDecisions, routerStatus, startHarness } from '../support/routerHarness';
import { startRedis, type RedisServer } from '../support/redisServer';

const SESSIONS = Number(process.env.SOAK_SESSIONS ?? 200);
const DURATION_MS = Number(process.env.SOAK_MS ?? 12_000);
const LABELS = ['a', 'b', 'c', 'd'];
/** The smallest body budget (32 MB): the waiting room may hold half of it, so the large bodies below can reach that bound. */
const BODY_BUDGET = 32 * 1024 * 1024;
const MAX_WAITING = 48;
/** One request in this many carries a 1 MB body. */
const LARGE_BODY_EVERY = 30;

/** A small seeded PRNG so a failing run can be repeated (SOAK_SEED). */
function rng(seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

/** Faults that do not cool an account down: frequent. */
const FAULTS: Array<() => SimFault> = [
  () => ({ kind: 'headerless_429' }),
  () => ({ kind: 'entitlement_429' }),
  () => ({ kind: 'error_after_content' }),
  () => ({ kind: 'truncate' }),
  () => ({ kind: 'expire_token' }),
  () => ({ kind: 'slow_first_byte', delayMs: 300 }),
  () => ({ kind: 'bad_request' }),
];
/** Faults that cool an account for seconds: rarer, or the whole pool would be cooling all the time. */
const COOLING_FAULTS: Array<() => SimFault> = [
  () => ({ kind: 'throttle', retryAfterS: 1 }),
  () => ({ kind: 'overloaded_529' }),
  () => ({ kind: 'overloaded_in_stream' }),
  () => ({ kind: 'server_error', status: 503 }),
];

/** What the soak runs against: one router, or two sharing a store. */
interface SoakTarget {
  sim: FakeUpstream;
  /** The routers the sessions go through; each session stays on one (a Claude Code on one machine), every tenth moves between them. */
  routers: Array<{ router: RunningRouter; stateDir: string }>;
  /** The pair of `label` the pool stores now (the credential store's copy, or the shared store's). */
  stored(label: string): Promise<{ accessToken: string; refreshToken: string }>;
  close(): Promise<void>;
}

/** The routing of every soak. */
const ROUTING = { sessionAffinity: true, spillInflight: 40, maxBufferedBodyBytes: BODY_BUDGET, maxWaitingRequests: MAX_WAITING, queueWaitMaxMs: 5_000 };

/** Windows no soak can fill: only the scripted herd exhausts an account. */
const spec = () => accounts(...LABELS).map((a) => ({ ...a, fiveHourLimitTokens: 1e12, sevenDayLimitTokens: 1e13 }));

/** One router over the credential file, as `claude-router start` runs it. */
async function oneRouter(log: Logger): Promise<SoakTarget> {
  const h = await startHarness(spec(), { sim: { sseDeltaCount: 6, maxRecords: 2000 }, routing: ROUTING, log });
  return {
    sim: h.sim,
    routers: [{ router: h.router, stateDir: h.stateDir }],
    stored: async (label) =>
      (JSON.parse(readFileSync(path.join(h.stateDir, 'credentials.json'), 'utf8')) as { accounts: Record<string, { accessToken: string; refreshToken: string }> }).accounts[label],
    close: () => h.close(),
  };
}

/** Two routers on one redis-server (docs/shared-pool.md), each with its own state directory and a copy of the pool's key. */
async function twoRoutersSharingAStore(log: Logger): Promise<SoakTarget> {
  const redis: RedisServer = await startRedis();
  const sim = await startFakeUpstream({ accounts: spec(), sseDeltaCount: 6, maxRecords: 2000 });
  const keyText = randomBytes(32).toString('hex');
  const routers: SoakTarget['routers'] = [];
  for (const n of [1, 2]) {
    const stateDir = mkdtempSync(path.join(os.tmpdir(), `router-soak-${n}-`));
    writeFileSync(path.join(stateDir, 'store.key'), keyText, { mode: 0o600 });
    const router = await startRouter({
      config: {
        listen: { host: '127.0.0.1', port: 0 },
        upstream: { baseUrl: sim.url, tokenUrl: sim.tokenUrl },
        stateDir,
        stateStore: redis.url,
        clientKey: 'test-client-key-0123456789',
        accounts: spec().map((a) => ({ label: a.label, accessToken: a.accessToken, refreshToken: a.refreshToken })),
        routing: ROUTING,
      },
      log,
      pollUsage: false,
      env: {},
    });
    routers.push({ router, stateDir });
  }
  return {
    sim,
    routers,
    stored: async (label) => {
      const blob = (await redis.client.hget(storeKeys.credentials(label), 'blob'))!;
      return JSON.parse(open(Buffer.from(keyText, 'hex'), blob, storeKeys.credentials(label))) as { accessToken: string; refreshToken: string };
    },
    close: async () => {
      for (const r of routers) {
        await r.router.close();
        rmSync(r.stateDir, { recursive: true, force: true });
      }
      await sim.close();
      await redis.close();
    },
  };
}

describe('soak: concurrent sessions with random faults and aborts', function () {
  this.timeout(DURATION_MS + 60_000);

  it('answers every client completely or with an Anthropic error, never twice, and leaks nothing', () => soak(oneRouter));

  it('does the same through two routers sharing a store: nothing lost, doubled or leaked, no refresh with a spent token', () => soak(twoRoutersSharingAStore));
});

async function soak(make: (log: Logger) => Promise<SoakTarget>): Promise<void> {
  const seed = Number(process.env.SOAK_SEED ?? Date.now() % 100000);
  const random = rng(seed);
  const logLines: string[] = [];
  const log = { debug: (m: string) => logLines.push(m), info: (m: string) => logLines.push(m), warn: (m: string) => logLines.push(m), error: (m: string) => logLines.push(m) };
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);
  process.on('unhandledRejection', onUnhandled);
  const h = await make(log);
  const counts = { requests: 0, complete: 0, anthropicErrors: 0, aborted: 0, faults: 0, spliced: 0, bad: 0, maxWaiting: 0, maxWaitingBytes: 0 };
  const badSamples: string[] = [];
  const errorBodies: string[] = [];
  const heapBefore = process.memoryUsage().heapUsed;
  try {
    const end = Date.now() + DURATION_MS;
    const session = async (s: number) => {
      for (let turn = 0; Date.now() < end; turn++) {
        const via = h.routers[(s % 10 === 0 ? turn : s) % h.routers.length];
        await new Promise((r) => setTimeout(r, 20 + random() * 100)); // a person (or an agent) between turns
        const stream = random() < 0.8;
        const ac = new AbortController();
        const abort = random() < 0.05;
        if (abort) setTimeout(() => ac.abort(), 5 + random() * 200);
        counts.requests++;
        const content = random() < 1 / LARGE_BODY_EVERY ? `soak ${s} ${'x'.repeat(1 << 20)}` : `soak ${s}`;
        const body = JSON.stringify({ model: 'claude-sonnet-4-5-20250929', max_tokens: 64, stream, messages: [{ role: 'user', content }] });
        let r;
        try {
          r = await callRouter(via, { session: `soak-${s}`, body, signal: ac.signal });
        } catch {
          counts.aborted++;
          continue;
        }
        if (r.bodyError && abort) {
          counts.aborted++;
          continue;
        }
        const starts = r.events.filter((e) => e === 'message_start').length;
        if (starts > 1) counts.spliced++;
        const okStream = r.status === 200 && starts === 1 && r.events.at(-1) === 'message_stop';
        const errStream = r.status === 200 && r.events.at(-1) === 'error';
        let okJson = false;
        let errJson = false;
        try {
          const j = JSON.parse(r.text);
          okJson = r.status === 200 && j.type === 'message';
          errJson = r.status >= 400 && j.type === 'error' && typeof j.error?.type === 'string' && typeof j.error?.message === 'string';
        } catch {
          /* not JSON */
        }
        if (!(okStream || okJson) && errorBodies.length < 5_000) errorBodies.push(r.text + JSON.stringify(r.headers));
        if (okStream || okJson) counts.complete++;
        else if (errStream || errJson) counts.anthropicErrors++;
        else if (abort) counts.aborted++;
        else {
          counts.bad++;
          if (badSamples.length < 3) badSamples.push(`${r.status} ${r.text.slice(0, 200)}`);
        }
      }
    };
    // Faults on a clock, not per request: a fast-failing pool must not draw more faults. A fault is
    // the upstream's behaviour of a moment, not a debt: one waits for an account's next request, no
    // more, or an account the pool kept away from (cooling) would meet a backlog of them on its return.
    const inject = (kinds: Array<() => SimFault>) => {
      const label = LABELS[Math.floor(random() * LABELS.length)];
      const fault = kinds[Math.floor(random() * kinds.length)]();
      if (h.sim.account(label).pendingFaults.length > 0) return;
      h.sim.injectFault(label, fault);
      counts.faults++;
    };
    // Concurrency throttles: now and then an account takes only a few requests at once, for a while.
    const throttleConcurrency = () => {
      const label = LABELS[Math.floor(random() * LABELS.length)];
      h.sim.setConcurrencyLimit(label, 2 + Math.floor(random() * 10));
      setTimeout(() => h.sim.setConcurrencyLimit(label, null), 1_500);
      counts.faults++;
    };
    // A herd: the account that served the first sessions runs out for a few seconds, and its sessions move together.
    const herd = () => {
      h.sim.injectFault('a', { kind: 'exhaust', window: '5h', resetInMs: 2_500 });
      counts.faults++;
    };
    // The waiting room, watched throughout: never above its bound of requests or of body bytes.
    const room = () => {
      for (const { router } of h.routers) {
        const w = router.engine.status().waiting;
        counts.maxWaiting = Math.max(counts.maxWaiting, w.requests);
        counts.maxWaitingBytes = Math.max(counts.maxWaitingBytes, w.bodyBytes);
      }
    };
    const faultTimers = [setInterval(() => inject(FAULTS), 30), setInterval(() => inject(COOLING_FAULTS), 3_000), setInterval(throttleConcurrency, 2_000), setInterval(room, 20)];
    const herdTimer = setTimeout(herd, DURATION_MS * 0.4);
    try {
      await Promise.all(Array.from({ length: SESSIONS }, (_, s) => session(s)));
    } finally {
      faultTimers.forEach(clearInterval);
      clearTimeout(herdTimer);
      for (const label of LABELS) h.sim.setConcurrencyLimit(label, null);
    }
    // Every router counts the pool's requests in flight: back to zero in each, the other routers' included.
    const statuses = [];
    for (const r of h.routers) {
      await eventually(async () => (await routerStatus(r)).inflight === 0, 10_000, 'in-flight back to zero');
      const st = await routerStatus(r);
      for (const a of st.accounts) assert.equal(a.inflight, 0, `${a.label} in flight`);
      assert.deepEqual(st.waiting, { requests: 0, bodyBytes: 0 }, 'nothing is left in the waiting room');
      statuses.push(st);
    }
    assert.ok(counts.maxWaiting <= MAX_WAITING, `the waiting room held at most ${MAX_WAITING} requests (${counts.maxWaiting})`);
    assert.ok(counts.maxWaitingBytes <= BODY_BUDGET / 2, `the waiting room held at most half the body budget (${counts.maxWaitingBytes} bytes)`);
    const statusText = JSON.stringify(statuses);
    for (const r of h.routers) await r.router.close();

    const decisions = h.routers.flatMap((r) => readDecisions(r.stateDir));
    const failovers = statuses.reduce((n, st) => n + (st.counters.failovers as number), 0);
    const outcomes: Record<string, number> = {};
    for (const d of decisions) outcomes[d.outcome] = (outcomes[d.outcome] ?? 0) + 1;
    const spentRefreshes = LABELS.reduce((n, label) => n + h.sim.account(label).spentRefreshes, 0);
    const refreshes = LABELS.reduce((n, label) => n + h.sim.account(label).refreshCount, 0);
    // Why the pool refused: each refused request's candidates by filter verdict, and the attempts it made.
    const refusedWhy: Record<string, number> = {};
    for (const d of decisions.filter((d) => d.outcome === 'no_usable_account')) {
      const why = [
        ...(d.candidates as Array<{ account: string; filter?: { code: string; reason?: string } }>).map(
          (c) => `${c.account}:${c.filter?.code}${c.filter?.reason ? `/${c.filter.reason}` : ''}`,
        ),
        ...(d.attempts as Array<{ account: string; result: string }>).map((a) => `try ${a.account}:${a.result}`),
        ...((d.waits as Array<{ why: string; end: string }> | undefined) ?? []).map((w) => `wait ${w.why}:${w.end}`),
      ].join(' ');
      refusedWhy[why] = (refusedWhy[why] ?? 0) + 1;
    }
    const refusals = Object.entries(refusedWhy)
      .sort((x, y) => y[1] - x[1])
      .slice(0, 3)
      .map(([why, n]) => `${n}× ${why}`)
      .join(' | ');
    console.log(
      `      soak seed ${seed} (${h.routers.length} router${h.routers.length > 1 ? 's sharing a store' : ''}): ${JSON.stringify({ ...counts, failovers, refreshes, spentRefreshes, decisions: decisions.length, outcomes })}`,
    );
    if (refusals) console.log(`      refused most often: ${refusals}`);

    assert.deepEqual(unhandled, [], 'no unhandled rejection');
    assert.equal(counts.spliced, 0, 'no response carries two message_start');
    assert.equal(counts.bad, 0, `every answer is complete or an Anthropic error: ${badSamples.join(' | ')}`);
    assert.ok(
      counts.complete > counts.requests * 0.3,
      `requests still succeed despite the faults (${counts.complete} of ${counts.requests}); refused most often: ${refusals || 'none'}`,
    );
    assert.ok(Math.abs(decisions.length - counts.requests) <= counts.aborted, `one decision per request (${decisions.length} for ${counts.requests})`);
    assert.equal(new Set(decisions.map((d) => d.requestId)).size, decisions.length, 'no request recorded twice');
    assert.equal(spentRefreshes, 0, 'no refresh token was sent after another refresh had spent it (no invalid_grant caused by rotation)');
    // Every token the faults expired could be refreshed: no account may end up asking for a sign-in.
    const signIn = statuses.flatMap((st) =>
      st.accounts.filter((a: { needsSignIn: boolean }) => a.needsSignIn).map((a: { label: string; needsSignInReason: string }) => `${a.label} (${a.needsSignInReason})`),
    );
    assert.deepEqual(signIn, [], 'no account needs sign-in');

    // Tokens: the stored pairs still work after all the rotation, and no token string leaked anywhere.
    const secrets: string[] = [];
    for (const label of LABELS) {
      const sim = h.sim.account(label);
      const stored = await h.stored(label);
      assert.equal(stored.refreshToken, sim.refreshToken, `${label}: the stored refresh token is the live one`);
      secrets.push(stored.accessToken, stored.refreshToken, `sk-ant-oat01-test-${label}`, `sk-ant-ort01-test-${label}`);
      const res = await request(h.sim.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: stored.refreshToken, client_id: 'x' }),
      });
      assert.equal(res.statusCode, 200, `${label}: the stored refresh token still refreshes`);
      await res.body.text();
    }
    const decisionText = JSON.stringify(decisions);
    const logs = logLines.join('\n');
    const errors = errorBodies.join('\n');
    for (const secret of secrets) {
      assert.ok(!errors.includes(secret), 'no token in an error answer');
      assert.ok(!decisionText.includes(secret), 'no token in the decision log');
      assert.ok(!logs.includes(secret), 'no token in the logs');
      assert.ok(!statusText.includes(secret), 'no token in /status');
    }
    // Every token the fake upstream ever issued has this shape, rotated ones included.
    const tokenShape = /sk-ant-o[ar]t01-/;
    for (const [what, text] of [
      ['error answers', errors],
      ['decision log', decisionText],
      ['logs', logs],
      ['/status', statusText],
    ]) {
      assert.ok(!tokenShape.test(text), `no token-shaped string in the ${what}`);
    }
    assert.ok(process.memoryUsage().heapUsed - heapBefore < 300 * 1024 * 1024, 'heap stays bounded');
  } finally {
    process.off('unhandledRejection', onUnhandled);
    await h.close();
  }
}
