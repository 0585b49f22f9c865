/**
 * The Redis server of the benchmark's shared-store cells (docs/shared-pool.md): the tests' real
 * `redis-server` (test/support/redisServer.ts) on a free loopback port, persisting nothing, stopped
 * with the run.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { startRedis } from '../test/support/redisServer';

export interface BenchRedis {
  url: string;
  /** The pool's key (64 hex digits), the same for every store target of the run. */
  keyText: string;
  /** Empties the database (a cell's pool starts empty). */
  flush(): Promise<void>;
  /** Stops the server (the signal goes at once: safe in an exit handler). */
  stop(): void;
}

/**
 * Starts redis-server, or returns undefined when it is not installed (the store cells are then left out, and the run says so).
 * @throws Error when it is installed but does not answer within 10 s
 */
export async function startBenchRedis(): Promise<BenchRedis | undefined> {
  if (spawnSync('redis-server', ['--version']).status !== 0) return undefined;
  const server = await startRedis();
  return {
    url: server.url,
    keyText: randomBytes(32).toString('hex'),
    flush: async () => {
      await server.client.flushdb();
    },
    stop: () => void server.close(),
  };
}
