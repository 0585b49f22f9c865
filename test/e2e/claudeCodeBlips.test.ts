/**
 * End to end under blips: the REAL Claude Code CLI (`claude -p`, a session continued with
 * `--resume`) → the BUILT router CLI → the fake upstream. A short throttle of the serving account
 * mid-session must show nothing to the user and keep the session on its account; and the router's
 * own answers, when it has to give one, make Claude Code do what they say: retry a throttle-shaped
 * 429, stop at once with "limit reached" for a usage window (docs/claude-code-client.md).
 *
 * Needs `npm run build` and the Claude Code binary from scripts/install-claude-code.sh; never skipped.
 */
import { strict as assert } from 'node:assert';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { startFakeUpstream, type FakeUpstream, type SimAccountSpec } from '../../src/sim';
import { claudeCodeEnvironment } from '../../src/proxy/http/clientEnv';
import type { DecisionRecord } from '../../src/routing/decision';
import { stickyKeyHash } from '../../src/routing/identify';
import { claudeCodeBinary, runClaudeCode, type ClaudeCodeResult } from '../support/claudeCode';
import { proxyConfigYaml, startRouterCli, type CliProcess } from '../support/routerCli';

const LABELS = ['alpha', 'bravo'];

describe('e2e: real Claude Code through blips', function () {
  this.timeout(180_000);

  const runId = randomBytes(4).toString('hex');
  const spec: SimAccountSpec[] = LABELS.map((label) => ({ label, accessToken: `sk-ant-oat01-blip-${label}-${runId}`, refreshToken: `sk-ant-ort01-blip-${label}-${runId}` }));
  const clientKey = `e2e-blips-key-${randomBytes(12).toString('hex')}`;
  let sim: FakeUpstream;
  let dir: string;
  const routers: CliProcess[] = [];

  before(async () => {
    claudeCodeBinary(); // fail fast, naming the install script, when Claude Code is missing
    sim = await startFakeUpstream({ accounts: spec });
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-e2e-blips-'));
  });

  after(async () => {
    for (const r of routers) await r.stop();
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A router CLI with `routing` (YAML lines under `routing:`), its own state directory. */
  async function router(name: string, routing: string[]): Promise<{ url: string; decisions: () => DecisionRecord[]; stderr: () => string }> {
    const stateDir = path.join(dir, name);
    const configFile = path.join(dir, `${name}.yaml`);
    const extra = ['routing:', ...routing.map((l) => `  ${l}`)].join('\n');
    writeFileSync(configFile, proxyConfigYaml({ port: 0, baseUrl: sim.url, tokenUrl: sim.tokenUrl, stateDir, clientKey, accounts: spec, extra }));
    const started = await startRouterCli(configFile);
    routers.push(started.proc);
    const decisions = () => {
      try {
        return readFileSync(path.join(stateDir, 'decisions.jsonl'), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as DecisionRecord);
      } catch {
        return [];
      }
    };
    return { url: started.url, decisions, stderr: () => started.proc.stderr() };
  }

  /** The decision records of `sessionId` once `count` are on disk (the log is written every 100 ms). */
  async function recordsOf(r: { decisions: () => DecisionRecord[] }, sessionId: string, count: number): Promise<DecisionRecord[]> {
    const end = Date.now() + 5_000;
    for (;;) {
      const found = r.decisions().filter((d) => d.stickyKeyHash === stickyKeyHash(sessionId));
      if (found.length >= count || Date.now() > end) return found;
      await new Promise((res) => setTimeout(res, 25));
    }
  }

  const describeRun = (run: ClaudeCodeResult, stderr: string) =>
    `exit ${run.code}${run.timedOut ? ' (timed out)' : ''} after ${run.durationMs} ms\n--- claude stdout ---\n${run.stdout}\n--- claude stderr ---\n${run.stderr}\n--- router stderr ---\n${stderr}`;

  it('a 1 s throttle on the serving account mid-session shows nothing to the user and keeps the session on its account', async () => {
    const r = await router('suggested', ['account-ranking: headroom-first', 'session-affinity: true', 'spill-inflight: 20']);
    const env = claudeCodeEnvironment(r.url, clientKey);
    const sessionId = randomUUID();
    // One HOME for both turns: `--resume` reads the session's transcript from it.
    const home = mkdtempSync(path.join(dir, 'home-'));
    const first = await runClaudeCode({ baseUrl: r.url, prompt: 'start the session', args: ['--session-id', sessionId], env, home, timeoutMs: 45_000 });
    assert.equal(first.code, 0, describeRun(first, r.stderr()));
    const bound = (await recordsOf(r, sessionId, 1))[0].servedBy!;
    assert.equal(first.stdout.trim(), `Hello from ${bound}.`);

    // The next call of the account, whenever Claude Code sends it, is throttled for 1 s.
    sim.injectFault(bound, { kind: 'throttle', retryAfterS: 1 });
    const before = sim.requests.length;
    const second = await runClaudeCode({ baseUrl: r.url, prompt: 'go on', args: ['--resume', sessionId], env, home, timeoutMs: 45_000 });
    assert.equal(second.code, 0, describeRun(second, r.stderr()));
    assert.equal(second.stdout.trim(), `Hello from ${bound}.`, `only the answer, from the same account\n${describeRun(second, r.stderr())}`);
    assert.doesNotMatch(second.stdout + second.stderr, /error|limit|rate|retry/i);

    const upstream = sim.requests.slice(before).filter((q) => q.path.startsWith('/v1/messages'));
    assert.ok(
      upstream.every((q) => q.account === bound && q.sessionId === sessionId),
      `every upstream call of the session went to ${bound}: ${JSON.stringify(upstream.map((q) => [q.account, q.status]))}`,
    );
    assert.ok(
      upstream.some((q) => q.status === 429),
      'the throttle did happen',
    );
    const records = await recordsOf(r, sessionId, 2);
    assert.equal(records.length, 2, `Claude Code sent one request per turn (no client retry): ${JSON.stringify(records.map((d) => d.attempts))}`);
    const turn = records[1];
    assert.equal(turn.outcome, 'success');
    assert.equal(turn.servedBy, bound);
    assert.deepEqual(
      turn.attempts.map((a) => [a.account, a.result]),
      [
        [bound, 'throttle'],
        [bound, 'success'],
      ],
    );
    assert.deepEqual(
      turn.waits?.map((w) => [w.why, w.account, w.end]),
      [['blip', bound, 'woken']],
    );
  });

  it("the router's own answers: Claude Code retries a throttle-shaped 429 unseen, and stops at once on a claimed usage window, a model's one included", async () => {
    // Nothing is held (max-waiting-requests 0) and nothing retried in the router (blip wait 0): the router answers itself.
    const r = await router('no-waiting', ['max-waiting-requests: 0', 'session-affinity-blip-wait-ms: 0']);
    const env = claudeCodeEnvironment(r.url, clientKey);
    for (const l of LABELS) sim.injectFault(l, { kind: 'throttle', retryAfterS: 1 });
    const retried = await runClaudeCode({ baseUrl: r.url, prompt: 'while every account pauses', env, timeoutMs: 60_000 });
    assert.equal(retried.code, 0, describeRun(retried, r.stderr()));
    assert.match(retried.stdout.trim(), /^Hello from (alpha|bravo)\.$/, describeRun(retried, r.stderr()));
    // The decision log is written every 100 ms: wait for the retry's record to be on disk.
    let sessions = r.decisions().filter((d) => d.path === '/v1/messages');
    for (let i = 0; i < 50 && !sessions.some((d) => d.outcome === 'success'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      sessions = r.decisions().filter((d) => d.path === '/v1/messages');
    }
    assert.ok(
      sessions.some((d) => d.outcome === 'no_usable_account' && d.status === 429),
      'the router answered its own throttle-shaped 429 first',
    );
    // Claude Code may send a background request of its own besides the turn: look for the retry, not at the last record.
    const refused = sessions.findIndex((d) => d.outcome === 'no_usable_account');
    assert.ok(
      sessions.slice(refused + 1).some((d) => d.outcome === 'success'),
      `and Claude Code retried it: ${sessions.map((d) => d.outcome).join(', ')}`,
    );

    // Every account out of its weekly Opus window (Claude Code's default model here): a usage window, claimed by its family.
    for (const l of LABELS) sim.injectFault(l, { kind: 'exhaust', window: '7d_opus', resetInMs: 2 * 86_400_000 });
    const stopped = await runClaudeCode({ baseUrl: r.url, prompt: 'after the limit', env, timeoutMs: 60_000 });
    assert.equal(stopped.code, 1, describeRun(stopped, r.stderr()));
    assert.match(stopped.stdout, /You've hit your Opus limit · resets /, describeRun(stopped, r.stderr()));
    const before = sessions.length;
    // Again: wait for the refused request's record to be written.
    for (let i = 0; i < 50 && r.decisions().filter((d) => d.path === '/v1/messages').length <= before; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    const last = r.decisions().at(-1)!;
    assert.equal(last.outcome, 'no_usable_account');
    assert.equal(r.decisions().filter((d) => d.requestId !== last.requestId && d.stickyKeyHash === last.stickyKeyHash).length, 0, 'Claude Code did not retry it');
    for (const l of LABELS) sim.clearFaults(l);
  });

  it("the router's busy answer (every account at its cap, nothing can wait: 429 retry-after 1, no claim): Claude Code retries it unseen and the user gets the answer", async () => {
    const r = await router('busy', ['max-inflight-per-account: 1', 'max-waiting-requests: 0', 'session-affinity-blip-wait-ms: 0']);
    // Two requests hold both accounts' only slot for 2.5 s: their upstream answers start late.
    for (const l of LABELS) sim.injectFault(l, { kind: 'slow_first_byte', delayMs: 2_500 });
    const occupiers = LABELS.map((_, i) =>
      request(`${r.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', authorization: `Bearer ${clientKey}`, 'x-claude-code-session-id': `occupier-${i}` },
        body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hold the slot' }] }),
      }).then((res) => res.body.text()),
    );
    const deadline = Date.now() + 5_000;
    while (LABELS.some((l) => sim.account(l).inflight < 1) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 10));
    const run = await runClaudeCode({ baseUrl: r.url, prompt: 'while every account is busy', env: claudeCodeEnvironment(r.url, clientKey), timeoutMs: 30_000 });
    await Promise.all(occupiers);
    assert.equal(run.code, 0, describeRun(run, r.stderr()));
    assert.match(run.stdout.trim(), /^Hello from (alpha|bravo)\.$/, `only the answer\n${describeRun(run, r.stderr())}`);
    let mine: DecisionRecord[] = [];
    for (let i = 0; i < 50 && !mine.some((d) => d.outcome === 'success'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      mine = r.decisions().filter((d) => d.path === '/v1/messages' && !['occupier-0', 'occupier-1'].map(stickyKeyHash).includes(d.stickyKeyHash ?? ''));
    }
    const busy = mine.filter((d) => d.outcome === 'no_usable_account' && d.status === 429);
    assert.ok(busy.length >= 1, `the router answered busy first: ${mine.map((d) => `${d.outcome} ${d.status}`).join(', ')}`);
    assert.ok(
      mine.slice(mine.indexOf(busy[0]) + 1).some((d) => d.outcome === 'success'),
      `and Claude Code retried until it was served: ${mine.map((d) => d.outcome).join(', ')}`,
    );
  });
});
