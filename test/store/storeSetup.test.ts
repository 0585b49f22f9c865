/**
 * Setting a shared pool up with the BUILT CLI (docs/shared-pool.md): a `state-store` that is no
 * Redis URL is refused naming the key (and never echoing a password), the first router creates
 * the key file (0600) and says how to copy it, and a machine whose key is not the pool's keeps to
 * its own credentials and says why — it neither reads nor overwrites the pool's pairs.
 */
import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startFakeUpstream, type FakeUpstream } from '../../src/sim';
import { storeKeys } from '../../src/store/keys';
import { proxyConfigYaml, runCli, startRouterCli, type CliProcess } from '../support/routerCli';
import { startRedis, type RedisServer } from '../support/redisServer';
import { post, until } from '../support/sharedPool';

describe('shared pool: setting it up', function () {
  this.timeout(60_000);
  let dir: string;
  const cleanups: (() => Promise<void> | void)[] = [];
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'router-store-setup-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  });
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  it('refuses a state-store that is no Redis URL, naming the key and never the password', async () => {
    const file = path.join(dir, 'proxy-config.yaml');
    writeFileSync(file, `state-dir: ${JSON.stringify(dir)}\nstate-store: "http://user:hunter2-secret@127.0.0.1:6379"\n`);
    const r = await runCli(['start', '--config', file]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /state-store: must be a redis:\/\/ or rediss:\/\/ URL/);
    assert.doesNotMatch(r.stderr + r.stdout, /hunter2-secret/);
  });

  describe('with a redis-server and the fake upstream', () => {
    let redis: RedisServer;
    let sim: FakeUpstream;
    const id = randomBytes(4).toString('hex');
    const accounts = [{ label: 'a', accessToken: `sk-ant-oat01-setup-${id}`, refreshToken: `sk-ant-ort01-setup-${id}` }];
    const clientKey = `setup-test-key-${randomBytes(12).toString('hex')}`;
    beforeEach(async () => {
      redis = await startRedis();
      cleanups.push(() => redis.close());
      sim = await startFakeUpstream({ accounts });
      cleanups.push(() => sim.close());
    });

    /** Starts a router on its own state directory `name`, sharing the redis-server. */
    async function router(name: string): Promise<{ proc: CliProcess; url: string; stateDir: string }> {
      const stateDir = path.join(dir, name);
      const file = path.join(dir, `${name}.yaml`);
      writeFileSync(
        file,
        proxyConfigYaml({ port: 0, baseUrl: sim.url, tokenUrl: sim.tokenUrl, stateDir, clientKey, accounts, extra: `state-store: ${JSON.stringify(redis.url)}` }),
      );
      const started = await startRouterCli(file);
      cleanups.push(() => started.proc.stop());
      return { ...started, stateDir };
    }

    it('creates the key file (0600) on first use and says how to copy it to the other machines', async () => {
      const first = await router('first');
      const keyFile = path.join(first.stateDir, 'store.key');
      await until(
        () => /created the key .*store\.key \(mode 0600\).*copy this file to every other machine/.test(first.proc.stderr()),
        5_000,
        'the router to say how to copy the key',
      );
      assert.match(readFileSync(keyFile, 'utf8'), /^[0-9a-f]{64}\n$/);
      assert.equal(statSync(keyFile).mode & 0o777, 0o600);
      assert.equal((await post({ clientKey }, first, 's1')).status, 200);
    });

    it("keeps a machine whose key is not the pool's to its own credentials, and says why", async () => {
      const first = await router('first');
      const sealed = await redis.client.hget(storeKeys.credentials('a'), 'blob');
      assert.ok(sealed, 'the first router put the pair of a in the pool');
      // The second machine was never given the key: it makes its own.
      const second = await router('second');
      await until(() => /sealed with another key/.test(second.proc.stdout() + second.proc.stderr()), 5_000, "the second router to say its key is not the pool's");
      const status = await runCli(['status', '--config', path.join(dir, 'second.yaml')]);
      assert.match(status.stdout, /store: redis:\/\/127\.0\.0\.1:\d+\/0 connected; the pool's tokens are sealed with another key than .*store\.key/);
      // It serves from its own copy, and the pool's pair stays the first router's.
      assert.equal((await post({ clientKey }, second, 's2')).status, 200);
      assert.equal(await redis.client.hget(storeKeys.credentials('a'), 'blob'), sealed);
      assert.equal((await post({ clientKey }, first, 's3')).status, 200);
    });
  });
});
