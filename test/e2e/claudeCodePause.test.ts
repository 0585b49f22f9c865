/**
 * End to end: a pool that pauses never ends a prompt. The REAL Claude Code CLI (`claude -p`) → the
 * BUILT router CLI → the fake upstream with every account out: for a pause the router's answer keeps
 * Claude Code retrying (`retry-after` at most 60 s, no claimed window) until an account serves; for
 * usage windows rejected for hours it stops at once with the user's limit and the time the first
 * account clears (routing.client-retry-horizon-ms, docs/claude-code-client.md#the-client-retry-horizon).
 *
 * Needs `npm run build` and the Claude Code binary from scripts/install-claude-code.sh; never skipped.
 */
import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startFakeUpstream, type FakeUpstream, type SimAccountSpec } from '../../src/sim';
import { claudeCodeEnvironment } from '../../src/proxy/http/clientEnv';
import type { DecisionRecord } from '../../src/routing/decision';
import { claudeCodeBinary, runClaudeCode, type ClaudeCodeResult } from '../support/claudeCode';
import { proxyConfigYaml, startRouterCli, type CliProcess } from '../support/routerCli';

const LABELS = ['alpha', 'bravo', 'charlie'];

describe('e2e: real Claude Code through a pool that pauses', function () {
  this.timeout(60_000);

  const runId = randomBytes(4).toString('hex');
  const spec: SimAccountSpec[] = LABELS.map((label) => ({ label, accessToken: `sk-ant-oat01-pause-${label}-${runId}`, refreshToken: `sk-ant-ort01-pause-${label}-${runId}` }));
  const clientKey = `e2e-pause-key-${randomBytes(12).toString('hex')}`;
  let sim: FakeUpstream;
  let dir: string;
  const routers: CliProcess[] = [];

  before(async () => {
    claudeCodeBinary(); // fail fast, naming the install script, when Claude Code is missing
    sim = await startFakeUpstream({ accounts: spec });
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-e2e-pause-'));
  });

  after(async () => {
    for (const r of routers) await r.stop();
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  afterEach(() => {
    for (const l of LABELS) sim.clearFaults(l);
  });

  /** A router CLI with `routing` (YAML lines under `routing:`), its own state directory. */
  async function router(name: string, routing: string[]): Promise<{ url: string; decisions: () => DecisionRecord[]; stderr: () => string }> {
    const stateDir = path.join(dir, name);
    const configFile = path.join(dir, `${name}.yaml`);
    const extra = routing.length > 0 ? ['routing:', ...routing.map((l) => `  ${l}`)].join('\n') : undefined;
    writeFileSync(configFile, proxyConfigYaml({ port: 0, baseUrl: sim.url, tokenUrl: sim.tokenUrl, stateDir, clientKey, accounts: spec, extra }));
    const started = await startRouterCli(configFile);
    routers.push(started.proc);
    const decisions = () => {
      try {
        return readFileSync(path.join(stateDir, 'decisions.jsonl'), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as DecisionRecord)
          .filter((d) => d.path === '/v1/messages');
      } catch {
        return [];
      }
    };
    return { url: started.url, decisions, stderr: () => started.proc.stderr() };
  }

  /** The decision records once one satisfies `done` (the log is written every 100 ms), or after 5 s. */
  async function decisionsUntil(r: { decisions: () => DecisionRecord[] }, done: (d: DecisionRecord) => boolean): Promise<DecisionRecord[]> {
    for (let i = 0; i < 50 && !r.decisions().some(done); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    return r.decisions();
  }

  const describeRun = (run: ClaudeCodeResult, stderr: string) =>
    `exit ${run.code}${run.timedOut ? ' (timed out)' : ''} after ${run.durationMs} ms\n--- claude stdout ---\n${run.stdout}\n--- claude stderr ---\n${run.stderr}\n--- router stderr ---\n${stderr}`;

  it('every account throttled for 65 s (retry-after above 60, no rejected window): the prompt completes, the pause unseen', async function () {
    this.timeout(150_000);
    // The router's own hold (transient-wait-max-ms) is shorter than the throttle, so the router must
    // answer — as with the default 90 s hold and a 100 s throttle. Before the horizon its answer said
    // `retry-after: 65` and Claude Code stopped at once ("Server is temporarily limiting requests").
    const r = await router('throttled', ['transient-wait-max-ms: 30000']);
    for (const l of LABELS) sim.injectFault(l, { kind: 'throttle_window', durationMs: 65_000 });
    const run = await runClaudeCode({ baseUrl: r.url, prompt: 'while the pool pauses', env: claudeCodeEnvironment(r.url, clientKey), timeoutMs: 130_000 });
    assert.equal(run.code, 0, describeRun(run, r.stderr()));
    assert.match(run.stdout.trim(), /^Hello from (alpha|bravo|charlie)\.$/, `only the answer\n${describeRun(run, r.stderr())}`);
    assert.ok(run.durationMs > 55_000, `Claude Code waited the pause out (${run.durationMs} ms)`);

    const records = await decisionsUntil(r, (d) => d.outcome === 'success');
    const refused = records.findIndex((d) => d.outcome === 'no_usable_account');
    assert.ok(refused >= 0 && records[refused].status === 429, `the router answered 429 first: ${records.map((d) => `${d.outcome} ${d.status}`).join(', ')}`);
    assert.ok(
      records.slice(refused + 1).some((d) => d.outcome === 'success'),
      `Claude Code retried it until an account served: ${records.map((d) => d.outcome).join(', ')}`,
    );
    assert.match(r.stderr(), /"(alpha|bravo|charlie)" \(throttle\) at [^,]+, in 1 min [0-5] s; retry in 60 s/, 'the log names the real wait and the retry asked for');
  });

  it("every account's 5-hour window rejected for hours: Claude Code stops within 15 s with the time the first account clears", async () => {
    const r = await router('exhausted', []);
    const resetIn: Record<string, number> = { alpha: 3 * 3_600_000, bravo: 2 * 3_600_000, charlie: 4 * 3_600_000 };
    const start = Date.now();
    for (const l of LABELS) sim.injectFault(l, { kind: 'exhaust', window: '5h', resetInMs: resetIn[l] });
    const run = await runClaudeCode({ baseUrl: r.url, prompt: 'after the limit', env: claudeCodeEnvironment(r.url, clientKey), timeoutMs: 30_000 });
    assert.equal(run.code, 1, describeRun(run, r.stderr()));
    assert.ok(run.durationMs < 15_000, `stopped at once (${run.durationMs} ms)`);
    // Claude Code shows the reset in its local time zone (UTC here: no TZ in its environment), as h:mm am/pm.
    const clock = (ms: number) => {
      const d = new Date(ms);
      const h = d.getUTCHours() % 12 || 12;
      return `${h}:${String(d.getUTCMinutes()).padStart(2, '0')}${d.getUTCHours() < 12 ? 'am' : 'pm'}`;
    };
    const bravoClears = start + resetIn.bravo;
    const expected = [clock(bravoClears), clock(bravoClears + 60_000)];
    const shown = /You've hit your 5-hour limit · resets (?:[A-Z][a-z]{2} \d{1,2}, )?(\d{1,2}:\d{2}[ap]m)/.exec(run.stdout);
    assert.ok(shown, `the user's limit is shown\n${describeRun(run, r.stderr())}`);
    assert.ok(expected.includes(shown[1]), `the time bravo (the first to clear) clears: ${shown[1]}, expected ${expected.join(' or ')}`);
    const records = await decisionsUntil(r, (d) => d.outcome === 'no_usable_account');
    assert.equal(records.length, 1, `one request, not retried: ${records.map((d) => d.outcome).join(', ')}`);
  });
});
