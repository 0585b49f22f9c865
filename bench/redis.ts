/**
 * The Redis server of the benchmark's shared-store cells (docs/shared-pool.md): Debian's
 * `redis-server` on a free loopback port, persisting nothing, stopped with the run.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

export interface BenchRedis {
  url: string;
  /** The pool's key (64 hex digits), the same for every store target of the run. */
  keyText: string;
  /** Empties the database (a cell's pool starts empty). */
  flush(): Promise<void>;
  stop(): void;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Sends one inline command to `port`; resolves with whether the answer starts with `expect`. */
function command(port: number, text: string, expect: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('error', () => resolve(false));
    s.once('connect', () => s.write(`${text}\r\n`));
    s.once('data', (d) => {
      s.destroy();
      resolve(d.toString().startsWith(expect));
    });
  });
}

/**
 * Starts redis-server, or returns undefined when it is not installed (the store cells are then left out, and the run says so).
 * @throws Error when it is installed but does not answer within 10 s
 */
export async function startBenchRedis(): Promise<BenchRedis | undefined> {
  if (spawnSync('redis-server', ['--version']).status !== 0) return undefined;
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'claude-router-bench-redis-'));
  const proc: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--loglevel', 'warning'], {
    stdio: 'ignore',
  });
  const end = Date.now() + 10_000;
  while (!(await command(port, 'PING', '+PONG'))) {
    if (Date.now() > end || proc.exitCode !== null) {
      proc.kill('SIGKILL');
      throw new Error(`redis-server did not answer on ${port}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}/0`,
    keyText: randomBytes(32).toString('hex'),
    flush: async () => {
      if (!(await command(port, 'FLUSHDB', '+OK'))) throw new Error('redis-server did not flush');
    },
    stop: () => {
      proc.kill('SIGTERM');
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
