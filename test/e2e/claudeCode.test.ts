/**
 * End to end: the REAL Claude Code CLI (`claude -p`) → the BUILT router CLI (`node dist/cli.js
 * start`, a child process) → the fake Anthropic upstream (in this process).
 *
 * Needs `npm run build` (dist/cli.js) and the Claude Code binary from
 * scripts/install-claude-code.sh; never skipped — `claudeCodeBinary()` fails with a clear
 * message when the binary is missing.
 */
import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { startFakeUpstream, type FakeUpstream, type SimAccountSpec, type SimRequestRecord } from '../../src/sim';
import { claudeCodeEnvironment } from '../../src/proxy/http/clientEnv';
import type { DecisionRecord } from '../../src/routing/decision';
import { stickyKeyHash } from '../../src/routing/identify';
import type { StatusReport } from '../../src/proxy/status/status';
import { claudeCodeBinary, runClaudeCode, type ClaudeCodeResult } from '../support/claudeCode';
import { proxyConfigYaml, startRouterCli, type CliProcess } from '../support/routerCli';

const LABELS = ['alpha', 'bravo', 'charlie'];

describe('e2e: real Claude Code → built router CLI → fake upstream', function () {
  this.timeout(120_000);

  const runId = randomBytes(4).toString('hex');
  const spec: SimAccountSpec[] = LABELS.map((label) => ({
    label,
    accessToken: `sk-ant-oat01-e2e-${label}-${runId}`,
    refreshToken: `sk-ant-ort01-e2e-${label}-${runId}`,
  }));
  const clientKey = `e2e-client-key-${randomBytes(12).toString('hex')}`;
  let sim: FakeUpstream;
  let dir: string;
  let stateDir: string;
  let router: CliProcess | undefined;
  let url: string;

  before(async () => {
    claudeCodeBinary(); // fail fast, naming the install script, when Claude Code is missing
    sim = await startFakeUpstream({ accounts: spec });
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-e2e-'));
    stateDir = path.join(dir, 'state');
    const configFile = path.join(dir, 'proxy-config.yaml');
    writeFileSync(configFile, proxyConfigYaml({ port: 0, baseUrl: sim.url, tokenUrl: sim.tokenUrl, stateDir, clientKey, accounts: spec }));
    const started = await startRouterCli(configFile);
    router = started.proc;
    url = started.url;
  });

  after(async () => {
    await router?.stop();
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function decisions(): DecisionRecord[] {
    try {
      return readFileSync(path.join(stateDir, 'decisions.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as DecisionRecord);
    } catch {
      return [];
    }
  }

  /** Decision records of `sessionId` (the log holds only its hash), once at least `min` are on disk (the log is written asynchronously). */
  async function decisionsOf(sessionId: string, min = 1, ms = 5_000): Promise<DecisionRecord[]> {
    const end = Date.now() + ms;
    for (;;) {
      const found = decisions().filter((d) => d.stickyKeyHash === stickyKeyHash(sessionId));
      if (found.length >= min) return found;
      if (Date.now() > end) {
        assert.fail(
          `no decision record for session ${sessionId} in ${stateDir}/decisions.jsonl after ${ms} ms; session key hashes there: ${JSON.stringify(decisions().map((d) => d.stickyKeyHash))}`,
        );
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  const describeRun = (r: ClaudeCodeResult) =>
    `exit ${r.code}${r.timedOut ? ' (timed out)' : ''} after ${r.durationMs} ms\n--- claude stdout ---\n${r.stdout}\n--- claude stderr ---\n${r.stderr}\n--- router stderr ---\n${router?.stderr()}`;

  /** One `claude -p` turn through the router; returns the run and the upstream messages requests it caused. */
  async function turn(prompt: string): Promise<{ run: ClaudeCodeResult; upstream: SimRequestRecord[]; sessionId: string }> {
    const before = sim.requests.length;
    const run = await runClaudeCode({ baseUrl: url, prompt, env: claudeCodeEnvironment(url, clientKey), timeoutMs: 45_000 });
    const upstream = sim.requests.slice(before).filter((q) => q.path.startsWith('/v1/messages'));
    assert.equal(run.code, 0, describeRun(run));
    assert.ok(upstream.length > 0, `the upstream saw no /v1/messages request\n${describeRun(run)}`);
    const sessions = new Set(upstream.map((q) => q.sessionId));
    assert.equal(sessions.size, 1, `one Claude Code run = one session, the upstream saw ${JSON.stringify([...sessions])}`);
    const sessionId = upstream[0].sessionId;
    assert.ok(sessionId, 'the upstream received x-claude-code-session-id');
    assert.equal(upstream[0].headers['x-claude-code-session-id'], sessionId);
    return { run, upstream, sessionId };
  }

  /** What the upstream must see on every forwarded request: a pool account's OAuth token, never the router key. */
  function assertUpstreamCredentials(upstream: SimRequestRecord[]): void {
    for (const q of upstream) {
      assert.ok(q.account && LABELS.includes(q.account), `request resolved to a pool account, got ${q.account}`);
      const auth = q.headers.authorization ?? '';
      assert.match(auth, /^Bearer sk-ant-oat01-/, 'upstream got an OAuth access token');
      const known = [spec.find((a) => a.label === q.account)!.accessToken, sim.account(q.account).accessToken];
      assert.ok(known.includes(auth.slice('Bearer '.length)), `authorization is ${q.account}'s token`);
      assert.ok(!JSON.stringify(q.headers).includes(clientKey), 'the router key never reaches the upstream');
      assert.ok((q.headers['anthropic-beta'] ?? '').split(',').includes('oauth-2025-04-20'), `anthropic-beta has the OAuth beta: ${q.headers['anthropic-beta']}`);
      assert.equal(q.headers['x-api-key'], undefined);
    }
  }

  let servedFirst: string;

  it('two claude -p runs are two sessions, each answered by a pool account and logged as a success', async () => {
    const one = await turn('say hi');
    const two = await turn('say hi again');
    assert.notEqual(one.sessionId, two.sessionId, 'two -p runs carry two different session ids');

    for (const t of [one, two]) {
      assertUpstreamCredentials(t.upstream);
      const recs = await decisionsOf(t.sessionId);
      for (const d of recs) {
        assert.equal(d.outcome, 'success', `decision ${d.requestId}: ${JSON.stringify(d)}`);
        assert.equal(d.status, 200);
        assert.ok(d.servedBy && LABELS.includes(d.servedBy), `servedBy ${d.servedBy}`);
      }
      const served = recs[recs.length - 1].servedBy!;
      // What the user sees is the serving account's answer, and nothing else.
      assert.equal(t.run.stdout.trim(), `Hello from ${served}.`, describeRun(t.run));
      assert.equal(t.upstream[t.upstream.length - 1].account, served, 'the decision log names the account the upstream billed');
    }
    const logged = new Set(decisions().map((d) => d.stickyKeyHash));
    assert.ok(logged.has(stickyKeyHash(one.sessionId)) && logged.has(stickyKeyHash(two.sessionId)));
    const log = readFileSync(path.join(stateDir, 'decisions.jsonl'), 'utf8');
    assert.ok(!log.includes(one.sessionId) && !log.includes(two.sessionId), 'the decision log holds no raw session id');
    servedFirst = (await decisionsOf(two.sessionId)).at(-1)!.servedBy!;
  });

  it('an account exhausted mid-run is failed over without any error reaching Claude Code', async function () {
    if (!servedFirst) this.skip(); // the previous test failed before learning which account served
    const exhausted = servedFirst;
    sim.injectFault(exhausted, { kind: 'exhaust', window: '5h', resetInMs: 3_600_000 });

    const t = await turn('say hi after the limit');
    assertUpstreamCredentials(t.upstream);
    const recs = await decisionsOf(t.sessionId);
    // No retry by Claude Code: exactly one request from it, and it succeeded.
    assert.equal(recs.length, 1, `Claude Code sent one request (no client retry): ${JSON.stringify(recs.map((d) => d.attempts))}`);
    const d = recs[0];
    assert.equal(d.outcome, 'success', JSON.stringify(d));
    assert.ok(d.servedBy && d.servedBy !== exhausted, `served by another account than ${exhausted}: ${d.servedBy}`);
    assert.equal(t.run.stdout.trim(), `Hello from ${d.servedBy}.`, `only the answer, no error text\n${describeRun(t.run)}`);
    assert.doesNotMatch(t.run.stdout + t.run.stderr, /error|limit|rate|login/i);

    const triedFirst = d.attempts[0]?.account === exhausted;
    if (triedFirst) {
      assert.equal(d.attempts[0].result, 'window_exhausted', JSON.stringify(d.attempts));
      assert.equal(d.attempts.at(-1)!.account, d.servedBy);
      assert.equal(d.attempts.at(-1)!.result, 'success');
      const rejected = t.upstream.filter((q) => q.account === exhausted);
      assert.ok(rejected.length === 1 && rejected[0].status === 429, `the upstream answered ${exhausted} with 429 once`);
    } else {
      const c = d.candidates.find((x) => x.account === exhausted)!;
      assert.equal(c.verdict, 'unusable', `${exhausted} neither tried nor skipped as unusable: ${JSON.stringify(d.candidates)}`);
      assert.ok(!d.attempts.some((a) => a.account === exhausted));
    }

    const res = await request(`${url}/status`, { headers: { 'x-claude-router-key': clientKey } });
    assert.equal(res.statusCode, 200);
    const status = (await res.body.json()) as StatusReport;
    const acc = status.accounts.find((a) => a.label === exhausted)!;
    assert.equal(acc.usable, false, JSON.stringify(acc));
    assert.ok(acc.coolingUntil !== null || acc.unusableReason === 'hard_saturated', `exhausted account is cooling or hard-saturated: ${JSON.stringify(acc)}`);
    if (acc.coolingUntil !== null) {
      const left = Date.parse(acc.coolingUntil) - Date.now();
      assert.ok(left > 30 * 60_000, `cooldown runs to about the window reset (1 h), not a short retry: ${acc.coolingUntil}`);
    }
    assert.ok(
      status.accounts.filter((a) => a.label !== exhausted).every((a) => a.usable),
      'the others stay usable',
    );
    assert.equal(status.usableAccounts, LABELS.length - 1);
    if (triedFirst) assert.ok(status.counters.failovers >= 1, `failover counted: ${JSON.stringify(status.counters)}`);
  });
});
