/**
 * The built CLI's proxy under 40 concurrent 31 MB bodies against a slow upstream: its peak
 * resident memory stays under the default body budget (256 MB) plus a margin, and the bodies
 * past the budget are answered 503 at once.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { eventually } from '../support/routerHarness';
import { proxyConfigYaml, startRouterCli, type CliProcess } from '../support/routerCli';
import { startStalledUpstream, type StalledUpstream } from '../support/stalledUpstream';

const MB = 1024 * 1024;
/** The default `routing.max-buffered-body-bytes`. */
const BUDGET = 256 * MB;
/** Node, the router and socket buffers besides the bodies (an idle proxy is about 70 MB). */
const MARGIN = 160 * MB;

/** Peak resident set of a process, bytes (Linux `VmHWM`). */
function peakRss(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error('no VmHWM');
  return Number(m[1]) * 1024;
}

describe('e2e: the request body budget bounds the proxy memory', function () {
  this.timeout(120_000);
  let dir: string;
  let upstream: StalledUpstream;
  let proc: CliProcess | undefined;
  before(function () {
    if (process.platform !== 'linux') this.skip();
  });
  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-rss-'));
    upstream = await startStalledUpstream();
  });
  afterEach(async () => {
    upstream.release();
    await proc?.stop();
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('40 concurrent 31 MB bodies: 8 held (under 256 MB), 32 answered 503 at once, peak RSS under the budget plus 160 MB', async () => {
    const clientKey = 'test-client-key-0123456789';
    const file = path.join(dir, 'proxy-config.yaml');
    writeFileSync(
      file,
      proxyConfigYaml({
        port: 0,
        baseUrl: upstream.url,
        tokenUrl: `${upstream.url}/token`,
        stateDir: path.join(dir, 'state'),
        clientKey,
        accounts: [{ label: 'a', accessToken: 'sk-ant-oat01-test-a' }],
      }),
    );
    const started = await startRouterCli(file);
    proc = started.proc;
    const pid = proc.child.pid!;
    const body = Buffer.alloc(31 * MB, 0x20);
    body.write('{"model":"claude-sonnet-4-5-20250929","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}');
    const post = async () => {
      const res = await request(`${started.url}/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${clientKey}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-claude-code-session-id': 'rss' },
        body,
      });
      await res.body.dump();
      return res.statusCode;
    };
    const calls = Array.from({ length: 40 }, post);
    await eventually(() => upstream.held() === 8, 60_000, '8 bodies upstream');
    const refused: number[] = [];
    for (const c of calls) void c.then((s) => s === 503 && refused.push(s));
    await eventually(() => refused.length === 32, 60_000, '32 refusals');
    const peak = peakRss(pid);
    upstream.release();
    const statuses = await Promise.all(calls);
    assert.equal(statuses.filter((s) => s === 200).length, 8);
    assert.ok(peak < BUDGET + MARGIN, `peak RSS ${Math.round(peak / MB)} MB`);
    process.stdout.write(`      proxy peak RSS ${Math.round(peak / MB)} MB\n`);
  });

  it('bodies without a session header count their parse: past the budget, a 503 overloaded_error with retry-after at once; every refused one is served when sent again', async () => {
    const clientKey = 'test-client-key-0123456789';
    const file = path.join(dir, 'proxy-config.yaml');
    writeFileSync(
      file,
      proxyConfigYaml({
        port: 0,
        baseUrl: upstream.url,
        tokenUrl: `${upstream.url}/token`,
        stateDir: path.join(dir, 'state'),
        clientKey,
        accounts: [{ label: 'a', accessToken: 'sk-ant-oat01-test-a' }],
        extra: `routing:\n  max-buffered-body-bytes: ${32 * MB}`,
      }),
    );
    const started = await startRouterCli(file);
    proc = started.proc;
    const body = Buffer.alloc(4 * MB, 0x20);
    body.write('{"model":"claude-sonnet-4-5-20250929","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}');
    const post = async () => {
      const res = await request(`${started.url}/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${clientKey}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body,
      });
      return { status: res.statusCode, retryAfter: res.headers['retry-after'], text: await res.body.text() };
    };
    // Each 4 MB body that will be parsed counts 12 MB: 2 fit the 32 MB budget.
    const calls = Array.from({ length: 10 }, post);
    await eventually(() => upstream.held() === 2, 30_000, '2 bodies upstream');
    const refused: Awaited<ReturnType<typeof post>>[] = [];
    for (const c of calls) void c.then((r) => r.status === 503 && refused.push(r));
    await eventually(() => refused.length === 8, 30_000, '8 refusals');
    for (const r of refused) {
      assert.equal(r.retryAfter, '2');
      assert.equal((JSON.parse(r.text) as { error: { type: string } }).error.type, 'overloaded_error');
    }
    assert.equal(upstream.held(), 2, 'no refused body reached the upstream');
    upstream.release();
    assert.equal((await Promise.all(calls)).filter((r) => r.status === 200).length, 2);
    for (let i = 0; i < 8; i++) assert.equal((await post()).status, 200, 'a refused request sent again is served');
  });
});
