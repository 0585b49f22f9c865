/**
 * End to end: the REAL Claude Code CLI (`claude -p`, with the router's environment, so
 * `CLAUDE_CODE_GATEWAY_HINT_HEADERS=1`) → the BUILT router CLI → a server that answers the first
 * turn with an `Agent` tool call (test/support/agentUpstream.ts) in front of the fake upstream.
 * The decision record names each request's class, and the sub-agent's requests carry the
 * hash of its agent id (docs/claude-code-client.md#request-classes).
 *
 * Needs `npm run build` (dist/cli.js) and the Claude Code binary from
 * scripts/install-claude-code.sh; never skipped.
 */
import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startFakeUpstream, type FakeUpstream, type SimAccountSpec } from '../../src/sim';
import { claudeCodeEnvironment } from '../../src/proxy/http/clientEnv';
import type { DecisionRecord } from '../../src/routing/decision';
import { stickyKeyHash } from '../../src/routing/identify';
import { startAgentUpstream, SPAWN_WORD, type AgentUpstream } from '../support/agentUpstream';
import { claudeCodeBinary, runClaudeCode } from '../support/claudeCode';
import { proxyConfigYaml, startRouterCli, type CliProcess } from '../support/routerCli';

describe('e2e: real Claude Code with hint headers → built router CLI: the request class in the decision record', function () {
  this.timeout(120_000);

  const runId = randomBytes(4).toString('hex');
  const spec: SimAccountSpec[] = ['alpha', 'bravo'].map((label) => ({
    label,
    accessToken: `sk-ant-oat01-hints-${label}-${runId}`,
    refreshToken: `sk-ant-ort01-hints-${label}-${runId}`,
  }));
  const clientKey = `e2e-client-key-${randomBytes(12).toString('hex')}`;
  let sim: FakeUpstream;
  let upstream: AgentUpstream;
  let dir: string;
  let stateDir: string;
  let router: CliProcess | undefined;
  let url: string;

  before(async () => {
    claudeCodeBinary();
    sim = await startFakeUpstream({ accounts: spec });
    upstream = await startAgentUpstream(sim.url);
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-e2e-hints-'));
    stateDir = path.join(dir, 'state');
    const configFile = path.join(dir, 'proxy-config.yaml');
    writeFileSync(configFile, proxyConfigYaml({ port: 0, baseUrl: upstream.url, tokenUrl: sim.tokenUrl, stateDir, clientKey, accounts: spec }));
    const started = await startRouterCli(configFile);
    router = started.proc;
    url = started.url;
  });

  after(async () => {
    await router?.stop();
    await upstream?.close();
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

  it('a prompt that starts a sub-agent: main and subagent classes recorded, the prompt id and the agent id hashed', async () => {
    const env = claudeCodeEnvironment(url, clientKey);
    assert.equal(env.CLAUDE_CODE_GATEWAY_HINT_HEADERS, '1');
    const run = await runClaudeCode({ baseUrl: url, prompt: `${SPAWN_WORD} a sub-agent please`, env, timeoutMs: 60_000 });
    const why = `exit ${run.code}\n--- stdout ---\n${run.stdout}\n--- stderr ---\n${run.stderr}\n--- router ---\n${router?.stderr()}\n--- seen ---\n${JSON.stringify(upstream.seen, null, 1)}`;
    assert.equal(run.code, 0, why);

    const seen = upstream.seen;
    const sub = seen.filter((q) => q.requestClass === 'subagent');
    const main = seen.filter((q) => q.requestClass === 'main');
    assert.ok(main.length >= 2 && sub.length >= 1, `Claude Code sent main and subagent requests: ${why}`);
    const agentId = sub[0].agentId;
    assert.ok(agentId, 'a sub-agent request carries x-claude-code-agent-id');
    assert.equal(new Set(seen.map((q) => q.sessionId)).size, 1, 'the sub-agent shares its parent session id');

    const end = Date.now() + 5_000;
    while (decisions().length < seen.length && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
    const recs = decisions();
    assert.equal(recs.length, seen.length, `one decision per request: ${JSON.stringify(recs.map((d) => d.requestClass))}`);
    // Requests run concurrently (the sub-agent beside its parent's next turn): match them by class and ids, not order.
    const session = stickyKeyHash(seen[0].sessionId!);
    for (const d of recs) {
      assert.equal(d.stickyKeyHash, session);
      assert.deepEqual([d.unitKey, d.unitSource], [session, 'x-claude-code-session-id']);
      assert.equal(d.outcome, 'success', JSON.stringify(d));
    }
    const count = (cls: string) => recs.filter((d) => d.requestClass === cls).length;
    assert.deepEqual([count('main'), count('subagent')], [main.length, sub.length], JSON.stringify(recs.map((d) => d.requestClass)));
    for (const d of recs.filter((x) => x.requestClass === 'subagent')) assert.equal(d.agentIdHash, stickyKeyHash(agentId));
    for (const d of recs.filter((x) => x.requestClass === 'main')) assert.equal(d.agentIdHash, null);
    const promptHashes = new Set(seen.filter((q) => q.promptId).map((q) => stickyKeyHash(q.promptId!)));
    for (const d of recs) assert.ok(d.promptIdHash && promptHashes.has(d.promptIdHash), `prompt id hash ${d.promptIdHash}`);
    assert.equal(recs.find((d) => d.requestClass === 'subagent')!.promptIdHash, stickyKeyHash(main[0].promptId!), "a sub-agent carries its parent prompt's id");
    const log = readFileSync(path.join(stateDir, 'decisions.jsonl'), 'utf8');
    assert.ok(!log.includes(agentId) && !log.includes(main[0].promptId!), 'no raw agent or prompt id in the log');
  });
});
