/**
 * A shared pool as a user runs one: a real redis-server, the fake upstream (a real HTTP server in
 * this process), and two BUILT router processes (`node dist/cli.js start`), each with its own state
 * directory and a copy of the same store key, both configured with `state-store`.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { startFakeUpstream, type FakeUpstream, type FakeUpstreamOptions, type SimAccountSpec } from '../../src/sim';
import type { StatusReport } from '../../src/proxy/status/status';
import { proxyConfigYaml, startRouterCli, type CliProcess } from './routerCli';
import { startRedis, type RedisServer } from './redisServer';

/** One router process of the pool. */
export interface PoolRouter {
  proc: CliProcess;
  url: string;
  stateDir: string;
  configFile: string;
  /** Its log so far (stdout and stderr). */
  log(): string;
  /** Its `/status`. */
  status(): Promise<StatusReport>;
  /** Starts it again (after `proc.stop()` or a kill) with the same config and state directory. */
  restart(): Promise<void>;
}

export interface Pool {
  redis: RedisServer;
  sim: FakeUpstream;
  routers: [PoolRouter, PoolRouter];
  clientKey: string;
  /** The key both machines hold (64 hex). */
  keyText: string;
  accounts: SimAccountSpec[];
  close(): Promise<void>;
}

export interface PoolOptions {
  labels: string[];
  sim?: Partial<FakeUpstreamOptions>;
  /** Extra YAML under `routing:` for router 1 and router 2 (two-space indented lines). */
  routing?: [string[], string[]];
}

/** Starts redis-server, the fake upstream and two routers sharing the store. */
export async function startPool(opts: PoolOptions): Promise<Pool> {
  const id = randomBytes(4).toString('hex');
  const accounts: SimAccountSpec[] = opts.labels.map((label) => ({ label, accessToken: `sk-ant-oat01-pool-${label}-${id}`, refreshToken: `sk-ant-ort01-pool-${label}-${id}` }));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'router-pool-'));
  const cleanups: (() => Promise<void> | void)[] = [() => rmSync(dir, { recursive: true, force: true })];
  const close = async () => {
    while (cleanups.length) await cleanups.pop()!();
  };
  try {
    const redis = await startRedis();
    cleanups.push(() => redis.close());
    const sim = await startFakeUpstream({ accounts, ...opts.sim });
    cleanups.push(() => sim.close());
    const clientKey = `pool-test-key-${randomBytes(12).toString('hex')}`;
    const keyText = randomBytes(32).toString('hex');
    const routers: PoolRouter[] = [];
    for (const n of [1, 2]) {
      const stateDir = path.join(dir, `machine-${n}`);
      mkdirSync(stateDir, { recursive: true, mode: 0o700 });
      // The key copied to each machine, where the router looks by default (<state-dir>/store.key).
      writeFileSync(path.join(stateDir, 'store.key'), `${keyText}\n`, { mode: 0o600 });
      const routing = opts.routing?.[n - 1] ?? [];
      const configFile = path.join(stateDir, 'proxy-config.yaml');
      writeFileSync(
        configFile,
        proxyConfigYaml({
          port: 0,
          baseUrl: sim.url,
          tokenUrl: sim.tokenUrl,
          stateDir,
          clientKey,
          accounts,
          extra: [`state-store: ${JSON.stringify(redis.url)}`, ...(routing.length ? ['routing:', ...routing] : [])].join('\n'),
        }),
      );
      const router: PoolRouter = {
        proc: undefined as unknown as CliProcess,
        url: '',
        stateDir,
        configFile,
        log: () => router.proc.stdout() + router.proc.stderr(),
        status: async () => {
          const res = await request(`${router.url}/status`, { headers: { 'x-claude-router-key': clientKey } });
          return (await res.body.json()) as StatusReport;
        },
        restart: async () => {
          const started = await startRouterCli(configFile);
          router.proc = started.proc;
          router.url = started.url;
          cleanups.push(() => started.proc.stop());
        },
      };
      await router.restart();
      routers.push(router);
    }
    return { redis, sim, routers: routers as [PoolRouter, PoolRouter], clientKey, keyText, accounts, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * Closes `pool`; when the test that used it failed, first prints the end of each router's log, so a
 * failure on CI (where nothing else is kept) says what the routers saw.
 */
export async function closePool(pool: Pool | undefined, test: Mocha.Test | undefined): Promise<void> {
  if (!pool) return;
  if (test?.state === 'failed')
    pool.routers.forEach((r, i) => {
      const lines = r.log().trimEnd().split('\n').slice(-60);
      console.log(`--- router ${i + 1} log, last ${lines.length} lines ---\n${lines.join('\n')}`);
    });
  await pool.close();
}

/** A Messages request as Claude Code sends it. */
export function messagesBody(opts: { stream?: boolean; model?: string; text?: string } = {}): string {
  return JSON.stringify({
    model: opts.model ?? 'claude-sonnet-4-5-20250929',
    max_tokens: 64,
    stream: opts.stream ?? false,
    messages: [{ role: 'user', content: opts.text ?? 'say hi' }],
  });
}

/** Sends one Messages request through `router`; resolves with its status and body text. */
export async function post(
  pool: Pick<Pool, 'clientKey'>,
  router: Pick<PoolRouter, 'url'>,
  session: string,
  opts: { stream?: boolean; signal?: AbortSignal; text?: string } = {},
): Promise<{ status: number; text: string }> {
  const res = await request(`${router.url}/v1/messages?beta=true`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      authorization: `Bearer ${pool.clientKey}`,
      'x-claude-code-session-id': session,
    },
    body: messagesBody({ stream: opts.stream, text: opts.text }),
    signal: opts.signal,
  });
  return { status: res.statusCode, text: await res.body.text() };
}

/** Waits until `cond` holds (polling every 50 ms), or throws naming `what` after `ms` (a function: what was seen by then). */
export async function until(cond: () => boolean | Promise<boolean>, ms: number, what: string | (() => string)): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
