/**
 * The log readers of the BUILT CLI (`report`, `replay`, `simulate`, `decisions` from the state
 * directory) on a log with one line of 40 MB: each streams the log with a per-line cap, skips that
 * line (naming it), and counts every other record.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DecisionRecord } from '../../src/routing/decision';
import { DEFAULT_POLICY } from '../../src/routing/policy';
import { generateWorkload, WEEK_SHAPE } from '../../src/whatif/generate';
import type { SimulationOutput } from '../../src/whatif/output';
import { writeGeneratedLog } from '../support/generatedLog';
import { runCli } from '../support/routerCli';

describe('e2e: log readers and a line of 40 MB', function () {
  this.timeout(60_000);
  let dir: string;
  /** The log with the long line (the state directory's decision log). */
  let log: string;
  /** The same log without it. */
  let clean: string;
  let records: number;

  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'cli-log-lines-'));
    clean = path.join(dir, 'clean.jsonl');
    log = path.join(dir, 'decisions.jsonl');
    writeGeneratedLog(clean, generateWorkload({ ...WEEK_SHAPE, days: 1 }), DEFAULT_POLICY);
    const lines = readFileSync(clean, 'utf8').trimEnd().split('\n');
    records = lines.length;
    // A well-formed decision record, padded to 40 MB: read whole, it would count (and be held whole).
    const padded = JSON.stringify({ ...(JSON.parse(lines[2]) as DecisionRecord), requestId: 'padded', pad: 'x'.repeat(40 * 1024 * 1024) });
    writeFileSync(log, [...lines.slice(0, 2), padded, ...lines.slice(2)].join('\n') + '\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('report: skips the long line with a warning naming it, counts every other record, exit 0', async () => {
    const r = await runCli(['report', log], 30_000);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /decisions\.jsonl:3: longer than 1 MB \(40 MB\), skipped\n/);
    assert.match(r.stdout, new RegExp(`^decisions: ${records}$`, 'm'));
  });

  it('replay: the long line is one unreadable line; every other decision is compared', async () => {
    const r = await runCli(['replay', log], 30_000);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^compared: ${records}, skipped: 0, unreadable lines: 1$`, 'm'));
  });

  it('simulate: names the long line and simulates the same traffic as the log without it', async () => {
    const [withLine, without] = await Promise.all([
      runCli(['simulate', log, '--json', '--policy', 'round-robin'], 30_000),
      runCli(['simulate', clean, '--json', '--policy', 'round-robin'], 30_000),
    ]);
    assert.equal(withLine.code, 0, withLine.stderr);
    assert.match(withLine.stderr, /decisions\.jsonl:3: longer than 1 MB \(40 MB\), skipped\n/);
    const a = JSON.parse(withLine.stdout) as SimulationOutput;
    const b = JSON.parse(without.stdout) as SimulationOutput;
    assert.deepEqual(a.stats, b.stats);
  });

  it('decisions (the log on disk): every record but the long one', async () => {
    const r = await runCli(['decisions', '--state-dir', dir, '--json', '-n', '10000'], 30_000);
    assert.equal(r.code, 0, r.stderr);
    const got = JSON.parse(r.stdout) as DecisionRecord[];
    assert.equal(got.length, records);
    assert.ok(!got.some((d) => d.requestId === 'padded'));
  });
});
