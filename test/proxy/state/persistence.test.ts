import { strict as assert } from 'node:assert';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { startFakeUpstream } from '../../../src/sim';
import { startRouter } from '../../../src/cli/runtime';
import { silentLogger } from '../../../src/proxy/log';
import { byRotationOrder } from '../../../src/proxy/state/decisionFiles';
import { DecisionLog } from '../../../src/proxy/state/decisionLog';
import { persistState } from '../../../src/proxy/state/persistence';
import { RouterState } from '../../../src/proxy/state/routerState';
import type { DecisionRecord } from '../../../src/routing/decision';
import { readDecisionRecord } from '../../../src/routing/decisionRead';
import { stickyKeyHash } from '../../../src/routing/identify';
import { accounts, callRouter, routerStatus, startHarness, type Harness } from '../../support/routerHarness';

/** A whole record (from the committed fixture) to vary: the log writes records member by member. */
const SAMPLE_RECORD = readDecisionRecord(JSON.parse(readFileSync(path.resolve(__dirname, '../../../../test/fixtures/ranking-branches.jsonl'), 'utf8').split('\n')[0]))!;

describe('router state across restarts, usage polling, caps, log rotation', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('keeps cooldowns, bindings and quota snapshots across a restart', async () => {
    const sim = await startFakeUpstream({ accounts: accounts('a', 'b') });
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'router-restart-'));
    const config = {
      listen: { host: '127.0.0.1' as const, port: 0 },
      upstream: { baseUrl: sim.url, tokenUrl: sim.tokenUrl },
      stateDir,
      clientKey: 'restart-key-0123456789',
      accounts: accounts('a', 'b').map((a) => ({ label: a.label, accessToken: a.accessToken, refreshToken: a.refreshToken })),
      routing: { sessionAffinity: true },
    };
    try {
      const first = await startRouter({ config, log: silentLogger, pollUsage: false });
      const hh = { router: first } as Harness;
      const served = (await callRouter(hh, { session: 'keep-me' })).headers['x-claude-router-account'];
      sim.injectFault(served, { kind: 'throttle', retryAfterS: 600 });
      const moved = await callRouter(hh, { session: 'second' });
      assert.notEqual(moved.headers['x-claude-router-account'], served);
      await first.close();

      const second = await startRouter({ config, log: silentLogger, pollUsage: false });
      try {
        const st = await routerStatus({ router: second });
        assert.equal(st.boundSessions, 2, 'bindings survived the restart');
        const cooling = st.accounts.find((x: any) => x.label === served);
        assert.equal(cooling.coolingReason, 'throttle', 'the cooldown survived the restart');
        assert.equal(cooling.evidence.source, 'headers', 'the quota snapshot survived the restart');
        const again = await callRouter({ router: second }, { session: 'second' });
        assert.equal(again.headers['x-claude-router-account'], moved.headers['x-claude-router-account'], 'a session returns to its account');
        assert.equal(sim.requests.filter((q) => q.account === served && q.path.startsWith('/v1/messages')).length, 2, 'the cooling account is not tried');
      } finally {
        await second.close();
      }
    } finally {
      await sim.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  it('keeps the usage history across a restart: the requests and tokens each account served, per interval, on /history', async () => {
    const sim = await startFakeUpstream({ accounts: accounts('a', 'b') });
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'router-history-'));
    const config = {
      listen: { host: '127.0.0.1' as const, port: 0 },
      upstream: { baseUrl: sim.url, tokenUrl: sim.tokenUrl },
      stateDir,
      clientKey: 'history-key-0123456789',
      accounts: accounts('a', 'b').map((a) => ({ label: a.label, accessToken: a.accessToken, refreshToken: a.refreshToken })),
      routing: { sessionAffinity: true },
    };
    const history = async (router: Harness['router'], range: string) => {
      const res = await request(`${router.url}/history?range=${range}`, { headers: { 'x-claude-router-key': router.clientKey } });
      return { status: res.statusCode, body: (await res.body.json()) as any };
    };
    const served = (series: any[]) =>
      Object.fromEntries(series.map((s) => [s.label, s.points.reduce((n: number[], p: any) => [n[0] + p.requests, n[1] + p.inputTokens + p.outputTokens], [0, 0])]));
    try {
      const first = await startRouter({ config, log: silentLogger, pollUsage: false });
      const hh = { router: first } as Harness;
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await callRouter(hh, { session: 'history' }));
      const account = answers[0].headers['x-claude-router-account'];
      const usage = answers.map((a) => JSON.parse(a.text).usage);
      const tokens = usage.reduce((n, u) => n + u.input_tokens + u.output_tokens, 0);
      assert.ok(tokens > 0);
      const before = served((await history(first, 'hour')).body);
      assert.deepEqual(before[account], [3, tokens], 'three requests and their tokens, counted for the account that served them');
      await first.close();

      const second = await startRouter({ config, log: silentLogger, pollUsage: false });
      try {
        for (const range of ['hour', 'day', 'week']) assert.deepEqual(served((await history(second, range)).body)[account], [3, tokens], `${range}: kept across the restart`);
        const week = (await history(second, 'week')).body.find((s: any) => s.label === account);
        assert.equal(week.stepMs, 30 * 60_000);
        assert.ok(
          week.points.some((p: any) => p.session !== null),
          'utilisation sampled by the router itself',
        );
        assert.equal((await history(second, 'month')).status, 400);
      } finally {
        await second.close();
      }
      assert.ok(readdirSync(stateDir).includes('usage-history.json'));
    } finally {
      await sim.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  it('polls the usage endpoint for accounts without evidence and stops for a 403', async () => {
    h = await startHarness([
      { ...accounts('a')[0], initialFiveHourUsed: 0.42 },
      { ...accounts('b')[0], usageEndpoint: false },
    ]);
    await h.router.poller.tick();
    await h.router.poller.tick();
    const st = await routerStatus(h);
    const a = st.accounts.find((x: any) => x.label === 'a');
    assert.equal(a.evidence.source, 'usage');
    assert.ok(Math.abs(a.session.used - 0.42) < 0.01, `5h used ${a.session.used} read as a fraction of percent`);
    const b = st.accounts.find((x: any) => x.label === 'b');
    assert.equal(b.evidence.freshness, 'unknown');
    const usageCalls = () => h!.sim.requests.filter((q) => q.path.startsWith('/api/oauth/usage')).length;
    const before = usageCalls();
    await h.router.poller.tick();
    assert.equal(usageCalls(), before, 'a 403 account and a freshly polled one are not polled again');
  });

  it('holds max-inflight-per-account: a second concurrent request goes to the next account', async () => {
    h = await startHarness(accounts('a', 'b'), { routing: { maxInflightPerAccount: 1 }, sim: { sseIntervalMs: 30 } });
    const body = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'x' }] });
    const [r1, r2] = await Promise.all([callRouter(h, { session: 's1', body }), callRouter(h, { session: 's2', body })]);
    assert.deepEqual([r1.headers['x-claude-router-account'], r2.headers['x-claude-router-account']].sort(), ['a', 'b']);
  });

  it('writes every decision in order, whole, through its batches (multi-byte text, a line larger than a batch)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'router-log-'));
    const log = new DecisionLog({ dir, flushIntervalMs: 5 });
    const rec = (i: number): DecisionRecord => ({ ...SAMPLE_RECORD, requestId: `r${i}`, model: i % 7 === 0 ? 'ünïcödé ✓ 🚀'.repeat(40) : 'x'.repeat(i % 300) });
    const huge: DecisionRecord = { ...SAMPLE_RECORD, requestId: 'huge', model: 'é'.repeat(40_000) };
    const sent: DecisionRecord[] = [];
    for (let i = 0; i < 600; i++) {
      const r = i === 300 ? huge : rec(i);
      log.append(r);
      sent.push(r);
      if (i % 50 === 0) await new Promise((r) => setTimeout(r, 6)); // some batches go out on the timer
    }
    await log.close();
    const lines = readFileSync(path.join(dir, 'decisions.jsonl'), 'utf8').split('\n');
    assert.equal(lines.pop(), '', 'the file ends with a newline');
    assert.deepEqual(
      lines.map((l) => JSON.parse(l)),
      sent,
    );
    assert.deepEqual(log.recent(3), sent.slice(-3));
    rmSync(dir, { recursive: true, force: true });
  });

  it('rotates decisions.jsonl by size and by day, keeping a bounded number of files', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'router-log-'));
    let t = Date.UTC(2026, 10, 30, 23, 59, 0);
    const log = new DecisionLog({ dir, maxBytes: 2_000, keep: 3, flushIntervalMs: 0, now: () => t });
    const rec = (i: number): DecisionRecord => ({ ...SAMPLE_RECORD, candidates: [], requestId: `r${i}`, model: 'x'.repeat(300) });
    const tick = () => new Promise((r) => setImmediate(r)); // requests arrive over many event-loop turns
    for (let i = 0; i < 20; i++) {
      log.append(rec(i));
      await tick();
    }
    t += 120_000; // next UTC day
    log.append(rec(99));
    await tick();
    await log.close();
    const files = readdirSync(dir).sort();
    assert.ok(files.includes('decisions.jsonl'));
    const rotated = files.filter((f) => f.startsWith('decisions-'));
    assert.equal(rotated.length, 3, files.join(','));
    // Many rotations fell in one second (-1, -2, … -10 suffixes): the newest were kept.
    const kept = rotated
      .sort(byRotationOrder)
      .flatMap((f) => readFileSync(path.join(dir, f), 'utf8').trim().split('\n'))
      .map((l) => Number(JSON.parse(l).requestId.slice(1)));
    assert.equal(kept[kept.length - 1], 19, `kept ${kept.join(',')} in ${rotated.join(',')}`);
    assert.ok(
      kept.every((v, i) => i === 0 || v === kept[i - 1] + 1),
      `the kept files hold the newest records, in order, without a gap: ${kept.join(',')}`,
    );
    const current = readFileSync(path.join(dir, 'decisions.jsonl'), 'utf8').trim().split('\n');
    assert.deepEqual(
      current.map((l) => JSON.parse(l).requestId),
      ['r99'],
      'a new day starts a new file',
    );
    assert.equal(
      log
        .recent(2)
        .map((r) => r.requestId)
        .join(),
      'r19,r99',
    );
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('router-state.json shared by several routers', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-shared-state-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A router's state bound to the shared file (loaded now, as at start). */
  const open = (saving = true, now: () => number = () => 1_000) => {
    const state = new RouterState(3_600_000);
    const persistence = persistState(state, { file: path.join(dir, 'router-state.json'), now, saving });
    return { state, persistence };
  };
  const bind = (r: { state: RouterState }, session: string, account: string) => {
    r.state.affinity.bind(K(session), account, 1_000);
    r.state.changed();
  };
  const onDisk = () => JSON.parse(readFileSync(path.join(dir, 'router-state.json'), 'utf8'));
  /** The store holds key hashes; the assertions name sessions by the names they were bound with. */
  const named = new Map<string, string>();
  const K = (name: string) => {
    named.set(stickyKeyHash(name), name);
    return stickyKeyHash(name);
  };
  const sessions = (saved: { bindings: { sessionId: string }[] }) => saved.bindings.map((b) => named.get(b.sessionId) ?? b.sessionId).sort();

  it('a saved state that cannot be read at start is kept aside as router-state.json.unreadable and said in the log, then replaced', async () => {
    const file = path.join(dir, 'router-state.json');
    writeFileSync(file, '{"version":2,"bindings":[{"sessionId":');
    const lines: string[] = [];
    const state = new RouterState(3_600_000);
    const persistence = persistState(state, { file, now: () => 1_000, log: (m) => lines.push(m) });
    assert.deepEqual(lines, ['state: router-state.json could not be read; starting without its bindings and cooldowns (the file is kept as router-state.json.unreadable)']);
    assert.equal(readFileSync(`${file}.unreadable`, 'utf8'), '{"version":2,"bindings":[{"sessionId":', 'the old bytes kept');
    state.affinity.bind(K('new'), 'a', 1_000);
    state.changed();
    await persistence.flush();
    assert.deepEqual(sessions(onDisk()), ['new'], 'the next save writes a readable state');
  });

  it('a following router never writes; when it leads it serves the newer saved state instead of its stale copy', async () => {
    const leader = open();
    const follower = open(false);
    bind(leader, 'warm', 'a');
    leader.state.setCooldown('a', { untilMs: 900_000, reason: 'throttle', setAtMs: 1_000 });
    await leader.persistence.close();
    bind(follower, 'stale', 'b');
    await follower.persistence.flush();
    assert.deepEqual(sessions(onDisk()), ['warm'], 'the follower did not write');

    assert.equal(follower.persistence.lead(), true);
    assert.equal(follower.state.affinity.get(K('warm'), 1_000)?.account, 'a');
    assert.equal(follower.state.affinity.get(K('stale'), 1_000), undefined, 'replaced, not merged');
    assert.equal(follower.state.cooldowns.get('a')?.reason, 'throttle');
    await follower.persistence.close();
    assert.equal(onDisk().generation, 2);
  });

  it("a save never replaces newer state with older: two routers saving to one file keep each other's changes", async () => {
    const first = open();
    const second = open();
    bind(first, 's1', 'a');
    await first.persistence.flush();
    bind(second, 's2', 'b');
    await second.persistence.flush();
    assert.deepEqual(sessions(onDisk()), ['s1', 's2'], 'the second saver folded in what the first saved');
    assert.equal(second.state.affinity.get(K('s1'), 1_000)?.account, 'a');
    bind(first, 's3', 'c');
    await first.persistence.close();
    await second.persistence.close();
    assert.deepEqual(sessions(onDisk()), ['s1', 's2', 's3']);
    assert.equal(onDisk().generation, 4);
  });

  it('a window that released the port hands over only what its last requests changed: the next leader owns the file, and keeps the late binding', async () => {
    let clock = 1_000;
    const old = open(true, () => clock);
    bind(old, 'warm', 'a');
    await old.persistence.flush();
    clock = 2_000;
    old.persistence.follow(); // the port is released after this
    const next = open(false, () => clock);
    assert.equal(next.persistence.lead(), false, 'it loaded the file at start already');
    next.state.affinity.clear();
    next.state.changed();
    await next.persistence.flush();
    clock = 2_500;
    old.state.affinity.bind(K('late'), 'b', clock); // a request of the old window that ended during its grace time
    old.state.changed();
    await old.persistence.close();
    assert.deepEqual(sessions(onDisk()), [], 'close after follow() writes nothing');
    await old.persistence.handOver();
    assert.deepEqual(sessions(onDisk()), ['late'], 'the late binding is handed over; what the new leader cleared stays cleared');
    clock = 3_000;
    bind(next, 'new', 'c');
    await next.persistence.close();
    assert.deepEqual(sessions(onDisk()).sort(), ['late', 'new'], 'the new leader folded the hand-over in at its next save');
  });

  it('a file saved by a version without generations counts as newer when it was saved later', async () => {
    const follower = open(false);
    bind(follower, 'stale', 'b');
    const file = path.join(dir, 'router-state.json');
    const older = { version: 1, savedAtMs: 5_000, snapshots: {}, cooldowns: {}, needsSignIn: {}, bindings: [{ sessionId: 'fresh', account: 'a', lastServedAtMs: 900 }] };
    writeFileSync(file, JSON.stringify(older));
    assert.equal(follower.persistence.lead(), true);
    assert.equal(follower.state.affinity.get(K('fresh'), 1_000)?.account, 'a');
    assert.equal(follower.state.affinity.get(K('stale'), 1_000), undefined);
    await follower.persistence.close();
  });
});
