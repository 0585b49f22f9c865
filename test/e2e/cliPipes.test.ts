/**
 * The BUILT CLI (`node dist/cli.js`) writing into a pipe: a slow reader gets every byte of a large
 * output (as a file does) and the command's own exit status; a reader that leaves early is no error.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_POLICY } from '../../src/routing/policy';
import { generateWorkload, WEEK_SHAPE } from '../../src/whatif/generate';
import { writeGeneratedLog } from '../support/generatedLog';
import { CLI_JS, runCli } from '../support/routerCli';

/** Reads its standard input slowly (a pause before the first read and after each chunk), or only its first chunk; prints the bytes read. */
const SLOW_READER = `
const firstOnly = process.argv[1] === 'first';
let bytes = 0;
process.stdin.pause();
setTimeout(() => process.stdin.resume(), 300);
process.stdin.on('data', (c) => {
  bytes += c.length;
  if (firstOnly) { process.stdout.write(String(bytes)); process.exit(0); }
  process.stdin.pause();
  setTimeout(() => process.stdin.resume(), 3);
});
process.stdin.on('end', () => process.stdout.write(String(bytes)));
`;

interface Piped {
  code: number | string;
  stderr: string;
  /** The bytes the reader received. */
  received: number;
}

/** `node dist/cli.js <args> | slow-reader`: the CLI's exit status and standard error, and what the reader got. */
async function pipeTo(args: string[], mode: 'slow' | 'first' = 'slow'): Promise<Piped> {
  const reader = spawn(process.execPath, ['-e', SLOW_READER, mode], { stdio: ['pipe', 'pipe', 'inherit'] });
  const cli = spawn(process.execPath, [CLI_JS, ...args], { stdio: ['ignore', reader.stdin, 'pipe'] });
  reader.stdin.destroy(); // the CLI holds the pipe's writing end now
  let stderr = '';
  let received = '';
  cli.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  reader.stdout.setEncoding('utf8').on('data', (c: string) => (received += c));
  const [code] = await Promise.all([
    new Promise<number | string>((resolve) => cli.once('close', (c, s) => resolve(c ?? s ?? 'unknown'))),
    new Promise<void>((resolve) => reader.once('close', () => resolve())),
  ]);
  return { code, stderr, received: Number(received) };
}

describe('e2e: the CLI into a slow pipe', function () {
  this.timeout(60_000);
  let dir: string;
  let log: string;

  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'cli-pipes-'));
    mkdirSync(path.join(dir, 'state'));
    log = path.join(dir, 'state', 'decisions.jsonl');
    writeGeneratedLog(log, generateWorkload({ ...WEEK_SHAPE, days: 2 }), DEFAULT_POLICY);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('decisions --json: a slow reader gets every byte of several MB, as a file does, and exit 0', async () => {
    const args = ['decisions', '--state-dir', path.join(dir, 'state'), '--json', '-n', '10000'];
    const whole = await runCli(args, 30_000);
    assert.equal(whole.code, 0, whole.stderr);
    const bytes = Buffer.byteLength(whole.stdout);
    assert.ok(bytes > 1_000_000, `${bytes} bytes`);
    const piped = await pipeTo(args);
    assert.equal(piped.received, bytes);
    assert.equal(piped.code, 0, piped.stderr);
  });

  it("replay: a slow reader gets every line, and the command's own exit status (1: differences)", async () => {
    const args = ['replay', log, '--ranking', 'headroom-first', '--all'];
    const whole = await runCli(args, 30_000);
    assert.equal(whole.code, 1, whole.stderr);
    const bytes = Buffer.byteLength(whole.stdout);
    assert.ok(bytes > 64 * 1024, `${bytes} bytes`);
    const piped = await pipeTo(args);
    assert.equal(piped.received, bytes);
    assert.equal(piped.code, 1, piped.stderr);
  });

  it('a reader that leaves after its first chunk: no EPIPE error or stack trace, exit 0', async () => {
    const piped = await pipeTo(['decisions', '--state-dir', path.join(dir, 'state'), '--json', '-n', '10000'], 'first');
    assert.ok(piped.received > 0 && piped.received < 1_000_000, `${piped.received} bytes`);
    assert.equal(piped.stderr, '');
    assert.equal(piped.code, 0);
  });
});
