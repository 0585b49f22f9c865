/**
 * The BUILT router CLI, started and serving a streamed request, leaves JavaScript's built-in
 * prototypes in the fast form V8 gave them — with and without a shared store. A module that
 * subclasses a built-in when it loads (ioredis's `class VerbatimString extends String`, which the
 * bundles replace: esbuild.mjs) puts that prototype in dictionary mode for the life of the process, and every method
 * call on such values in optimised code then takes a slow generic lookup: five times slower for
 * string methods (docs/performance.md, "Loading the Redis client"). The check runs inside the
 * CLI's own process through a preloaded module that asks V8 (`%HasFastProperties`).
 */
import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { startFakeUpstream, type FakeUpstream } from '../../src/sim';
import { startRedis, type RedisServer } from '../support/redisServer';
import { proxyConfigYaml, spawnCli, waitForStdout, type CliProcess } from '../support/routerCli';

/** Built-ins whose prototypes the product's hot path calls methods on. */
const BUILTINS = ['String', 'Array', 'Object', 'Function', 'Number', 'Promise', 'Map', 'Set', 'Uint8Array', 'RegExp', 'Error', 'Date'];

/**
 * Preloaded before the CLI: notes which prototypes are fast then, and at exit prints
 * `PROTOTYPES {"String":[before, after], …}` on stderr.
 */
const PRELOAD = `
const v8 = require('node:v8');
v8.setFlagsFromString('--allow-natives-syntax');
const fast = new Function('o', 'return %HasFastProperties(o)');
const names = ${JSON.stringify(BUILTINS)};
const before = names.map((n) => fast(globalThis[n].prototype));
process.on('exit', () => {
  const seen = Object.fromEntries(names.map((n, i) => [n, [before[i], fast(globalThis[n].prototype)]]));
  process.stderr.write('PROTOTYPES ' + JSON.stringify(seen) + '\\n');
});
`;

describe('e2e: the built CLI keeps the built-in prototypes fast', function () {
  this.timeout(30_000);

  let dir: string;
  let sim: FakeUpstream | undefined;
  let proxy: CliProcess | undefined;
  let redis: RedisServer | undefined;
  afterEach(async () => {
    await proxy?.stop();
    await sim?.close();
    await redis?.close();
    redis = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Starts the built CLI under the preload with `extra` config lines, serves one streamed answer,
   * stops it, and returns the prototypes that were fast before start-up and are not at exit.
   */
  async function prototypesLeftSlow(extra: string): Promise<string[]> {
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-protos-'));
    const preload = path.join(dir, 'preload.js');
    writeFileSync(preload, PRELOAD);
    const spec = [{ label: 'acct1', accessToken: `sk-ant-oat01-protos-${randomBytes(6).toString('hex')}`, refreshToken: `sk-ant-ort01-protos-${randomBytes(6).toString('hex')}` }];
    sim = await startFakeUpstream({ accounts: spec });
    const clientKey = `protos-key-${randomBytes(12).toString('hex')}`;
    const file = path.join(dir, 'proxy-config.yaml');
    writeFileSync(
      file,
      proxyConfigYaml({
        port: 0,
        baseUrl: sim.url,
        tokenUrl: sim.tokenUrl,
        stateDir: path.join(dir, 'state'),
        clientKey,
        accounts: spec,
        extra: `${extra}\nrouting:\n  session-affinity: true`,
      }),
    );
    proxy = spawnCli(['start', '--config', file], { env: { NODE_OPTIONS: `--require ${JSON.stringify(preload)}` } });
    const url = (await waitForStdout(proxy, /^listening on (http:\/\/127\.0\.0\.1:\d+)$/m))[1];

    const res = await request(`${url}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', authorization: `Bearer ${clientKey}`, 'x-claude-code-session-id': 'protos-session' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5-20250929', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'say hi' }] }),
    });
    const text = await res.body.text();
    assert.equal(res.statusCode, 200, text);
    assert.match(text, /event: message_stop/);

    await proxy.stop();
    const line = proxy.stderr().match(/^PROTOTYPES (.*)$/m);
    assert.ok(line, `the preload reported nothing; stderr:\n${proxy.stderr()}`);
    const seen = JSON.parse(line[1]) as Record<string, [boolean, boolean]>;
    assert.ok(seen.String[0], 'String.prototype is fast in a fresh node (the check can see a change)');
    return Object.entries(seen)
      .filter(([, [before, after]]) => before && !after)
      .map(([name]) => `${name}.prototype`);
  }

  it('after start-up and a streamed answer, no built-in prototype that was fast has left fast mode', async () => {
    const slowed = await prototypesLeftSlow('');
    assert.deepEqual(slowed, [], `left fast mode: ${slowed.join(', ')}`);
  });

  it('with a shared store (the Redis client loaded and talking to redis-server), none has either', async () => {
    redis = await startRedis();
    const slowed = await prototypesLeftSlow(`state-store: ${JSON.stringify(redis.url)}`);
    // The router did use the store: its binding and in-flight records are there.
    assert.ok((await redis.client.dbsize()) > 0, 'the router wrote nothing to the store');
    assert.deepEqual(slowed, [], `left fast mode: ${slowed.join(', ')}`);
  });
});
