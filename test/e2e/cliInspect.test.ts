/**
 * Looking into a running proxy from the BUILT CLI: `decisions` (from the log on disk, filtered,
 * each candidate's verdict in words), `explain` (would it be picked), `estimation` (cost leases), `status --watch` (redrawn in
 * place in a pseudo-terminal from script(1), plain lines otherwise) and colours only on a terminal
 * without NO_COLOR or --no-color.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import type { DecisionRecord } from '../../src/routing/decision';
import { stickyKeyHash } from '../../src/routing/identify';
import { startFakeUpstream, type FakeUpstream, type SimAccountSpec } from '../../src/sim';
import { CLI_JS, runCli, spawnCli, waitForStdout, type CliProcess } from '../support/routerCli';

const ESC = '\x1b';
/** The text without its escape codes (colours, cursor moves). */
const plain = (text: string) => text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');

describe('e2e: decisions, explain and status --watch', function () {
  this.timeout(90_000);

  const id = randomBytes(4).toString('hex');
  const spec: SimAccountSpec[] = ['work', 'personal'].map((label) => ({
    label,
    accessToken: `sk-ant-oat01-inspect-${label}-${id}`,
    refreshToken: `sk-ant-ort01-inspect-${label}-${id}`,
  }));
  let dir: string;
  let stateDir: string;
  let env: Record<string, string>;
  let sim: FakeUpstream;
  let proxy: CliProcess;
  let url: string;
  const cleanups: (() => Promise<void> | void)[] = [];

  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-inspect-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(path.join(dir, 'xdg'));
    stateDir = path.join(dir, 'xdg', 'claude-router');
    env = { XDG_CONFIG_HOME: path.join(dir, 'xdg'), CLAUDE_ROUTER_KEY: '', NO_COLOR: '' };
    sim = await startFakeUpstream({ accounts: spec });
    cleanups.push(() => sim.close());
    for (const a of spec) {
      const r = await runCli(['accounts', 'add', '--label', a.label], 10_000, { env, input: `${a.accessToken}\n${a.refreshToken}\n` });
      assert.equal(r.code, 0, r.stderr);
    }
    await startProxy();
  });
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  async function startProxy(extra: string[] = []): Promise<void> {
    proxy = spawnCli(['start', '--port', '0', '--upstream-url', sim.url, '--token-url', sim.tokenUrl, ...extra], { env });
    cleanups.push(() => proxy.stop());
    url = (await waitForStdout(proxy, /^listening on (http:\/\/127\.0\.0\.1:\d+)$/m))[1];
  }
  async function send(session: string, model = 'claude-sonnet-4-5-20250929'): Promise<void> {
    const key = readFileSync(path.join(stateDir, 'client-key'), 'utf8').trim();
    const res = await request(`${url}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', authorization: `Bearer ${key}`, 'x-claude-code-session-id': session },
      body: JSON.stringify({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await res.body.text();
    assert.equal(res.statusCode, 200, text);
  }
  const cli = (args: string[]) => runCli(args, 15_000, { env });
  /** Runs the CLI in a pseudo-terminal (script(1)); returns its process and its output so far. */
  function inTerminal(args: string[], extraEnv: Record<string, string> = {}, before = '') {
    // Node counts any `CI` variable as a terminal without colours (tty.getColorDepth): a CI runner's must not decide this test.
    const { CI: _ci, ...outer } = process.env;
    // `exec`: a shell that stays between the pty and the CLI (dash, where SHELL is unset) dies of the Ctrl-C itself (130).
    const command = `${before}exec ${[process.execPath, CLI_JS, ...args].map((a) => `'${a}'`).join(' ')}`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: { ...outer, ...env, TERM: 'xterm-256color', ...extraEnv },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    cleanups.push(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    });
    return { child, out: () => out, exited };
  }
  async function until(what: string, ok: () => boolean, ms = 5_000): Promise<void> {
    const end = Date.now() + ms;
    while (!ok()) {
      if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('`decisions`: the last N with every candidate’s verdict in words, filtered, also from before a restart; bad filters exit 2', async () => {
    await send('first-session');
    await send('second-session');
    await send('first-session');
    // The proxy restarts: the decisions are read from its log on disk.
    await proxy.stop();
    await startProxy();

    const all = await cli(['decisions']);
    assert.equal(all.code, 0, all.stderr);
    assert.equal(all.stdout.match(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ {2}req_router_/gm)?.length, 3, all.stdout);
    assert.match(all.stdout, /^ {2}→ work {2}success 200 /m);
    // The start-up sweep reads the accounts' usage one by one: until it reaches personal, work wins on better-known quota.
    assert.match(all.stdout, /^ {4}work {6}selected — (it comes first in the account order|its quota is better known)$/m);
    assert.match(all.stdout, /^ {4}personal {2}eligible — ranked 2nd: /m);
    assert.doesNotMatch(all.stdout, new RegExp(`${ESC}\\[`), 'no colour when not a terminal');

    const hash = stickyKeyHash('first-session');
    const one = await cli(['decisions', '--session', hash.slice(0, 8), '--json']);
    assert.equal(one.code, 0, one.stderr);
    const records = JSON.parse(one.stdout) as DecisionRecord[];
    assert.deepEqual(
      records.map((r) => r.stickyKeyHash),
      [hash, hash],
    );
    assert.doesNotMatch(one.stdout, /first-session/, 'never the raw session id');
    const last = JSON.parse((await cli(['decisions', '-n', '1', '--json'])).stdout) as DecisionRecord[];
    assert.deepEqual(
      last.map((r) => r.requestId),
      [records[1].requestId],
      'the newest one',
    );
    assert.equal(JSON.parse((await cli(['decisions', '--account', 'personal', '--json'])).stdout).length, 0);
    assert.equal(JSON.parse((await cli(['decisions', '--since', '1h', '--json'])).stdout).length, 3);
    assert.match((await cli(['decisions', '--outcome', 'no_usable_account'])).stdout, /^no decisions match$/m);

    // With no proxy running, the same query reads the log on disk (no key needed), paged alike.
    await proxy.stop();
    const offline = await cli(['decisions', '--session', hash.slice(0, 8), '--json']);
    assert.equal(offline.code, 0, offline.stderr);
    assert.deepEqual(
      (JSON.parse(offline.stdout) as DecisionRecord[]).map((r) => r.requestId),
      records.map((r) => r.requestId),
    );
    assert.equal((await cli(['decisions', '-n', '2'])).stdout.match(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ {2}req_router_/gm)?.length, 2);

    for (const [args, message] of [
      [['decisions', '--since', 'yesterday'], /--since: expected an ISO-8601 time, epoch milliseconds or a time ago/],
      [['decisions', '--limit', '0'], /--limit: expected an integer 1–10000, got "0"/],
      [['decisions', '--session', 'XYZ'], /--session: expected 4–16 lowercase hex digits/],
      [['decisions', '--outcome', 'fine'], /argument 'fine' is invalid. Allowed choices are success, /],
      [['decisions', '--reason', 'session-affinity'], /argument 'session-affinity' is invalid. Allowed choices are availability, .*session_affinity/],
      [['explain', '--session', 'first-session'], /--session: expected a session key hash \(16 lowercase hex digits, as `decisions` shows it\) or its first 4\+ digits/],
    ] as const) {
      const r = await cli([...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
    }
  });

  it('`decisions --follow` prints each new decision as it is made, once; Ctrl-C ends it with exit 0', async () => {
    // Older decisions in the log must not come back on the first poll: only what follows the one printed.
    for (let i = 0; i < 3; i++) await send('before-follow');
    const f = spawnCli(['decisions', '--follow', '-n', '1'], { env });
    cleanups.push(() => f.stop());
    await waitForStdout(f, /req_router_\S+ {2}claude-sonnet/);
    await send('while-following', 'claude-haiku-4-5');
    await waitForStdout(f, /claude-haiku-4-5 {2}session /);
    await send('while-following', 'claude-opus-4-1');
    await waitForStdout(f, /claude-opus-4-1 {2}session /);
    assert.equal(f.stdout().match(/^\d{4}-\d\d-\d\d /gm)?.length, 3, `each decision once:\n${f.stdout()}`);
    await f.stop();
    assert.equal(await f.exited, 0, f.stderr());
  });

  it('`explain`: where a new request would go and each account’s verdict; with a session, its binding', async () => {
    const r = await cli(['explain', '--model', 'claude-opus-4-1']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^A new request for claude-opus-4-1 would go to work: (it comes first in the account order|its quota is better known)\.$/m);
    assert.match(r.stdout, /^ {2}personal {2}eligible — ranked 2nd: /m);
    assert.equal((await cli(['accounts', 'disable', 'work'])).code, 0);
    const end = Date.now() + 2_000;
    let after = await cli(['explain']);
    while (!/would go to personal/.test(after.stdout) && Date.now() < end) after = await cli(['explain']);
    assert.match(after.stdout, /^A new request would go to personal: /m);
    assert.match(after.stdout, /^ {2}work {6}disabled$/m);
  });

  it('`explain --session`: a unique prefix of 4+ digits is that bound session; an ambiguous one or one of no session exits 2 saying so', async () => {
    await proxy.stop();
    const config = path.join(dir, 'affinity.yaml');
    writeFileSync(config, 'routing:\n  session-affinity: true\n');
    await startProxy(['--config', config]);
    // Two sessions whose hashes share their first 4 digits.
    const seen = new Map<string, string>();
    let pair: [string, string] | undefined;
    for (let i = 0; !pair; i++) {
      const id = `prefix-${i}`;
      const other = seen.get(stickyKeyHash(id).slice(0, 4));
      if (other) pair = [other, id];
      else seen.set(stickyKeyHash(id).slice(0, 4), id);
    }
    for (const s of pair) await send(s);
    const [a, b] = pair.map(stickyKeyHash);
    let common = 4;
    while (a[common] === b[common]) common++;

    const one = await cli(['explain', '--session', a.slice(0, common + 1)]);
    assert.equal(one.code, 0, one.stderr);
    assert.match(one.stdout, new RegExp(`^A new request of session ${a} would go to `, 'm'));
    const ambiguous = await cli(['explain', '--session', a.slice(0, common)]);
    assert.equal(ambiguous.code, 2, ambiguous.stdout);
    assert.match(ambiguous.stderr, new RegExp(`--session ${a.slice(0, common)}: ambiguous, 2 bound sessions start with it \\((${a}, ${b}|${b}, ${a})\\); give more digits`));
    const free = [...'0123456789abcdef'].map((d) => a.slice(0, common) + d).find((p) => !a.startsWith(p) && !b.startsWith(p))!;
    const none = await cli(['explain', '--session', free]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, new RegExp(`--session ${free}: no bound session starts with it \\(2 bound\\)`));
  });

  it('`decisions --account` with a label no account has says so, naming the labels there are (exit 2), from the proxy and from the log on disk', async () => {
    await send('label-session');
    for (const running of [true, false]) {
      if (!running) await proxy.stop();
      const r = await cli(['decisions', '--account', 'nobody']);
      assert.equal(r.code, 2, r.stdout);
      assert.match(r.stderr, /^claude-router: --account: no account has the label "nobody" \(the accounts: "work", "personal"\)$/m);
      assert.doesNotMatch(r.stdout, /no decisions match/);
      const known = await cli(['decisions', '--account', 'personal']);
      assert.equal(known.code, 0, known.stderr);
      assert.match(known.stdout, /^no decisions match$/m);
    }
  });

  it('`estimation`: each model the proxy has served, warming up toward its p95, and each account with nothing reserved once the requests end; --json is /estimation', async () => {
    await send('estimate-1');
    await send('estimate-2');
    const r = await cli(['estimation']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ {2}claude-sonnet-4-5-20250929 {2}warming up · 2 of 20 samples · leases max_tokens$/m);
    assert.match(r.stdout, /^ {2}work {6}nothing reserved$/m);
    assert.match(r.stdout, /^ {2}personal {2}nothing reserved$/m);
    const json = await cli(['estimation', '--json']);
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout) as { margin: number; models: { model: string; samples: number; state: string }[] };
    assert.equal(report.margin, 1.15);
    assert.deepEqual(
      report.models.map((m) => [m.model, m.samples, m.state]),
      [['claude-sonnet-4-5-20250929', 2, 'warming_up']],
    );
  });

  it('`status --watch` in a terminal redraws in place on a change, with bars and the why; Ctrl-C ends it with the cursor back', async () => {
    const t = inTerminal(['status', '--watch']);
    await until('the first frame', () => /why:/.test(t.out()));
    const first = t.out();
    assert.ok(first.startsWith(`${ESC}[?25l${ESC}[2J${ESC}[H`), JSON.stringify(first.slice(0, 40)));
    assert.match(plain(first), /work .*Active .*[█░·]{10}/);
    assert.match(plain(first), /work +A new request would go here/);

    assert.equal((await cli(['accounts', 'disable', 'personal'])).code, 0);
    await until('a redraw showing personal disabled', () => /personal +disabled +Disabled/.test(plain(t.out().slice(first.length))), 5_000);
    assert.ok(t.out().split(`${ESC}[H`).length - 1 >= 2, 'drawn again from the top, in place');
    assert.doesNotMatch(t.out().slice(first.length), /\n\nACCOUNT[^\n]*\n[\s\S]*\n\nACCOUNT/, 'not appended below');

    t.child.stdin.write('\x03'); // Ctrl-C at the terminal
    assert.equal(await t.exited, 0);
    assert.ok(t.out().includes(`${ESC}[?25h`), 'the cursor is shown again');
  });

  it('`status --watch` not on a terminal: plain tables after each change; it ends with exit 1 when the proxy stops', async () => {
    const w = spawnCli(['status', '--watch'], { env });
    cleanups.push(() => w.stop());
    await waitForStdout(w, /why:/);
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal((await cli(['accounts', 'disable', 'personal'])).code, 0);
    await waitForStdout(w, /^personal +disabled +Disabled/m);
    assert.ok(!w.stdout().includes(ESC), 'no escape codes');
    // Each print is its head line (with the time) and the table: no table is printed twice in a row.
    const tables = w
      .stdout()
      .split(/^claude-router status --watch .*$/m)
      .map((t) => t.trim())
      .filter(Boolean);
    assert.ok(tables.length >= 2, 'the table again after the change');
    for (let i = 1; i < tables.length; i++) assert.notEqual(tables[i], tables[i - 1], `print ${i + 1} repeats the table before it`);
    await proxy.stop();
    assert.equal(await w.exited, 1);
    assert.match(w.stderr(), /the proxy at http:\/\/127\.0\.0\.1:\d+ stopped/);
  });

  it('`status` and `status --watch` fit 80 columns off a terminal, and the terminal’s width on one, keeping every column', async () => {
    await send('width-session');
    const widest = (text: string) =>
      Math.max(
        ...plain(text)
          .split('\n')
          .map((l) => [...l.replace(/\r$/, '')].length),
      );
    const r = await cli(['status']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(widest(r.stdout) <= 80, r.stdout);
    for (const header of ['ACCOUNT', 'STATUS', '5H', '7D', 'IN-FLIGHT', 'SESSIONS', 'ELIGIBILITY', 'NOTE']) assert.match(r.stdout, new RegExp(`\\b${header}\\b`), header);
    assert.match(r.stdout, /^work +\S/m);
    assert.match(r.stdout, /^personal +\d+ +eligible\b/m, r.stdout);

    const w = spawnCli(['status', '--watch'], { env });
    cleanups.push(() => w.stop());
    await waitForStdout(w, /^requests \d+/m);
    assert.ok(widest(w.stdout()) <= 80, w.stdout());
    await w.stop();

    const t = inTerminal(['status'], {}, 'stty cols 60; ');
    assert.equal(await t.exited, 0);
    assert.ok(widest(t.out()) <= 60, t.out());
    assert.match(plain(t.out()), /NOTE/);
  });

  it('colours only on a terminal, and never with NO_COLOR or --no-color', async () => {
    const coloured = inTerminal(['status']);
    assert.equal(await coloured.exited, 0);
    assert.ok(coloured.out().includes(`${ESC}[32m`), `green on a terminal: ${JSON.stringify(coloured.out().slice(0, 200))}`);
    for (const [args, extra] of [
      [['status'], { NO_COLOR: '1' }],
      [['--no-color', 'status'], {}],
      [['status', '--no-color'], {}],
    ] as const) {
      const plain = inTerminal([...args], extra);
      assert.equal(await plain.exited, 0);
      assert.match(plain.out(), /why:/);
      assert.doesNotMatch(plain.out(), new RegExp(`${ESC}\\[\\d+m`), `${args.join(' ')} ${JSON.stringify(extra)}`);
    }
  });
});
