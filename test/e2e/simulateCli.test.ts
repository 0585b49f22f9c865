/**
 * `claude-router simulate` through the BUILT CLI (`node dist/cli.js`) on a decision log a real
 * router wrote against the fake upstream: the comparison table and its JSON, the calibration of
 * the logged policy, policies by name and by file, bad input with its file, line and exit code;
 * and `report`'s weekly resets on a log that has one.
 */
import { strict as assert } from 'node:assert';
import { appendFileSync, copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_POLICY } from '../../src/routing/policy';
import { STRATEGY_NAMES } from '../../src/routing/planner/strategies/registry';
import { generateWorkload } from '../../src/whatif/generate';
import type { SimulationOutput } from '../../src/whatif/output';
import { ONE_RESET_SHAPE, writeGeneratedLog } from '../support/generatedLog';
import { LIVE_SHAPE, runLiveWorkload } from '../support/liveLog';
import { runCli } from '../support/routerCli';

/** Text the CLI wrapped at 80 columns with its lines joined again (a continuation line is indented, and is no list item or table row). */
const unwrap = (text: string) => text.replace(/\n {2,}(?![-*] |\S+ {2})/g, ' ');

describe('e2e: claude-router simulate', function () {
  this.timeout(120_000);
  let dir: string;
  let log: string;
  let messages: number;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'simulate-cli-'));
    log = path.join(dir, 'decisions.jsonl');
    const live = await runLiveWorkload({ sessionAffinity: true }, { ...LIVE_SHAPE, sessions: 4, turns: 20, thinkMs: 40 }, log);
    messages = live.decisions;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("replays a real router's log under every policy of the catalogue; its own policy reproduces what happened", async () => {
    const r = await runCli(['simulate', log, '--json'], 60_000);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    const out = JSON.parse(r.stdout) as SimulationOutput;
    assert.equal(out.stats.requests, messages);
    // a serves until the throttle, b while a cools; c, never needed, takes their median.
    assert.deepEqual(
      out.accounts.map((a) => [a.label, a.allowance]),
      [
        ['a', 'inferred'],
        ['b', 'inferred'],
        ['c', 'assumed'],
      ],
    );
    assert.ok(Math.abs(out.accounts[0].fiveHourAllowanceTokens - 300_000) < 300, `a's 5-hour allowance: ${out.accounts[0].fiveHourAllowanceTokens}`);
    assert.equal(out.policies.length, STRATEGY_NAMES.length + 1, 'each strategy, fill-first under both rankings');
    assert.deepEqual(
      out.policies.filter((p) => p.recorded).map((p) => p.name),
      ['fill-first:expiry-first'],
    );
    assert.equal(out.recorded.description, 'fill-first:expiry-first, affinity (idle 60 min)');
    assert.ok(out.calibration.ok, JSON.stringify(out.calibration));
    assert.equal(out.actual.midSessionSwitches, out.recorded.report.midSessionSwitches);
    assert.ok(out.wallMs > 0);
    assert.ok(out.limits.some((l) => /same arrivals/.test(l)));
  });

  it('prints the table with the log, the recorded policy marked, the calibration, the limits and the wall time', async () => {
    const yaml = path.join(dir, 'suggested.yaml');
    writeFileSync(yaml, 'routing:\n  account-ranking: headroom-first\n  session-affinity: true\n  spill-inflight: 20\n');
    const r = await runCli(['simulate', log, '--policy', 'fill-first:headroom-first', '--policy', yaml, '--policy', 'round-robin'], 60_000);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    const table = lines.slice(lines.findIndex((l) => l.startsWith('policy ')) + 1);
    const rows = table.slice(0, table.indexOf('')).map((l) => l.trim().split(/\s{2,}/)[0]);
    assert.deepEqual(rows, ['actual (the log)', '* fill-first:expiry-first (recorded, replayed)', 'fill-first:headroom-first', 'suggested.yaml', 'round-robin']);
    // Off a terminal it fits 80 columns: the table in blocks of columns, each led by the policy; every column kept.
    assert.ok(Math.max(...lines.map((l) => [...l].length)) <= 80, r.stdout);
    assert.equal(lines.filter((l) => l.startsWith('policy ')).length > 1, true, 'the table in blocks');
    for (const column of ['switches/1k', 'ping-pong', 'cache writes', 'on switches', '≤1 usable', '≥2 usable h', 'fallback', 'refused', 'unused at weekly resets'])
      assert.ok(r.stdout.includes(column), column);
    assert.match(r.stdout, /^recorded policy: fill-first:expiry-first, affinity \(idle 60 min\)$/m);
    assert.match(unwrap(r.stdout), /^calibration \(fill-first:expiry-first replayed vs the log\): mid-session switches \d+ vs \d+.* — within ±10 % or ±2 of what happened\.$/m);
    assert.match(r.stdout, /^limits:\n {2}- Every policy sees the same arrivals/m);
    assert.match(r.stdout, new RegExp(`^replayed ${messages} requests under 4 policies in \\d+\\.\\d\\d s$`, 'm'));
  });

  it('reports bad lines with file and line number and skips them; refuses what it cannot use with exit 2', async () => {
    const damaged = path.join(dir, 'damaged.jsonl');
    copyFileSync(log, damaged);
    const n = readFileSync(damaged, 'utf8').trim().split('\n').length;
    appendFileSync(
      damaged,
      '{"schemaVersion":3,"ts":"2026-01-01T00:00:00Z"}\nnot json at all\n{"schemaVersion":2,"ts":"2026-01-01T00:00:00Z","path":"/v1/messages"}\n{"schemaVersion":2,"ts":"2026-01-01T00:0',
    );
    const r = await runCli(['simulate', damaged, '--policy', 'round-robin', '--json'], 60_000);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stderr,
      [
        `claude-router: ${damaged}:${n + 1}: a record of schema version 3 (this version reads 1 and 2), skipped`,
        `claude-router: ${damaged}:${n + 2}: not JSON (a truncated or damaged line), skipped`,
        `claude-router: ${damaged}:${n + 3}: a malformed decision record (no path, policy or candidates), skipped`,
        `claude-router: ${damaged}:${n + 4}: not JSON (a truncated or damaged line), skipped`,
        'claude-router: skipped 4 line(s) that are not decision records',
        '',
      ].join('\n'),
    );
    assert.equal((JSON.parse(r.stdout) as SimulationOutput).stats.records, n);

    const refused = async (args: string[], message: RegExp) => {
      const x = await runCli(['simulate', ...args], 30_000);
      assert.equal(x.code, 2, `${args.join(' ')}: ${x.stderr}`);
      assert.match(x.stderr, message);
      assert.doesNotMatch(x.stderr, /\n\s+at /, 'no stack trace');
      assert.equal(x.stdout, '');
    };
    await refused([path.join(dir, 'missing.jsonl')], /^claude-router: cannot read .*missing\.jsonl: no such file\n$/);
    const empty = path.join(dir, 'empty.jsonl');
    writeFileSync(empty, 'hello\n');
    await refused([empty], /nothing to simulate in .*empty\.jsonl: the log holds no \/v1\/messages request to replay\n$/);
    await refused(
      [log, '--policy', 'fill-frist'],
      /--policy fill-frist: neither a strategy of the catalogue \(fill-first:expiry-first, fill-first:headroom-first, round-robin, .*\) nor a readable file \(fill-frist: ENOENT\)\n$/,
    );
    await refused([log, '--policy', 'fill-first:newest-first'], /--policy fill-first:newest-first: unknown ranking "newest-first" \(expiry-first or headroom-first\)/);
    const invalid = path.join(dir, 'invalid.yaml');
    writeFileSync(invalid, 'routing:\n  spill-inflight: 500\n');
    await refused([log, '--policy', invalid], /--policy .*invalid\.yaml: routing\.spill-inflight: Too big/);
    const help = await runCli(['simulate', '--help']);
    assert.match(help.stdout, /^Usage: claude-router simulate \[options\] <decisions\.jsonl\.\.\.>/);
  });

  it('reads a version 1 log; one without any recorded usage says so instead of printing silent zeros', async () => {
    const v1 = path.resolve(__dirname, '../../../test/fixtures/ranking-branches.jsonl');
    const r = await runCli(['simulate', v1, '--policy', 'round-robin']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^what-if: 28 requests \(28 sessions\)/);
    assert.match(unwrap(r.stdout), /^ {2}- WARNING: no request of the log recorded its token usage: every token figure is 0 and no window fills\.$/m);
    assert.equal(r.stderr, 'claude-router: WARNING: no request of the log recorded its token usage: every token figure is 0\n');
  });

  it('warns on stderr when replaying the logged policy does not reproduce the log', async () => {
    // Served requests rewritten as refused: a refusal the model cannot explain.
    const tampered = path.join(dir, 'tampered.jsonl');
    let n = 0;
    const lines = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => {
        const r = JSON.parse(l);
        if (!r.servedBy || n >= 10) return l;
        n++;
        return JSON.stringify({ ...r, servedBy: null, outcome: 'no_usable_account', status: 429, usage: null });
      });
    writeFileSync(tampered, lines.join('\n') + '\n');
    const r = await runCli(['simulate', tampered, '--policy', 'round-robin'], 60_000);
    assert.equal(r.code, 0);
    assert.match(r.stderr, /^claude-router: WARNING: replaying the logged policy does not reproduce the log \(.*refused requests 0 vs 10\)/m);
    assert.match(unwrap(r.stdout), /WARNING: .*refused requests off by more than ±10 % and ±2 — the reconstruction is too far off to trust these results/);
  });

  it('report shows a weekly reset that expired with unused allowance', async () => {
    const resetLog = path.join(dir, 'reset.jsonl');
    writeGeneratedLog(resetLog, generateWorkload(ONE_RESET_SHAPE), { ...DEFAULT_POLICY, strategy: 'sequential-drain' });
    const r = await runCli(['report', resetLog]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^weekly resets: 1 \(1 expired with unused allowance, 0\.60 account-weeks unused in all\)\n {2}a: reset 2025-06-03T00:00:00\.000Z, 60\.0% unused$/m);
    const json = JSON.parse((await runCli(['report', resetLog, '--json'])).stdout);
    assert.equal(json.weeklyResets[0].account, 'a');
    assert.ok(Math.abs(json.weeklyResets[0].unusedFraction - 0.6) < 1e-9);
  });
});
