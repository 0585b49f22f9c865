/**
 * A real Redis server for the shared-pool tests: `redis-server` (Debian's package; `.ci/run` and
 * `npm test`'s pretest install it) on 127.0.0.1 and a free port, in a temporary directory,
 * persisting nothing (`--save '' --appendonly no`). It can be stopped and started again on the
 * same port (the "Redis went away" tests).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './net';

export interface RedisServer {
  port: number;
  /** `redis://127.0.0.1:<port>/0` */
  url: string;
  /** A client of its own for the test's looks into the store (closed with the server). */
  client: Redis;
  /** Stops the server (SIGTERM; nothing is saved). */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  /** Stops it for good and removes its directory. */
  close(): Promise<void>;
}

/** Fails with how to install it when `redis-server` is not on PATH. */
function assertInstalled(): void {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      'redis-server is not installed: the shared-pool tests need a real one (Debian/Ubuntu: `sudo apt-get install -y redis-server`; `npm test` installs it when it runs as root)',
    );
  }
}

/** Starts a redis-server on a free loopback port and waits until it accepts connections. */
export async function startRedis(): Promise<RedisServer> {
  assertInstalled();
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'redis-test-'));
  let proc: ChildProcess | undefined;
  const launch = async () => {
    const child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', '--loglevel', 'warning'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    proc = child;
    const end = Date.now() + 10_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}): ${output}`);
      // A fresh client per look: one whose connection failed is not reused.
      const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 1_000 });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        if ((await probe.ping()) === 'PONG') return;
      } catch {
        /* not listening yet */
      } finally {
        probe.disconnect();
      }
      if (Date.now() > end) throw new Error(`redis-server did not accept connections on ${port} within 10 s: ${output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const halt = async () => {
    const p = proc;
    proc = undefined;
    if (!p || p.exitCode !== null) return;
    const gone = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    await gone;
  };
  await launch();
  const client = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1, retryStrategy: (n) => Math.min(n * 50, 500) });
  client.on('error', () => undefined);
  return {
    port,
    url: `redis://127.0.0.1:${port}/0`,
    client,
    stop: halt,
    start: launch,
    close: async () => {
      client.disconnect();
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
