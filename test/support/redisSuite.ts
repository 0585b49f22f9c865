/** Mocha hooks for the in-process store tests (kept apart from redisServer.ts, which the benchmarks import too). */
import { startRedis, type RedisServer } from './redisServer';

/**
 * The mocha hooks of an in-process store test: one redis-server for the suite (`before`/`after`),
 * and what each test opened closed after it, last first (`afterEach`). Call inside `describe`.
 */
export function redisForSuite(): { server(): RedisServer; closeAfterTest(close: () => Promise<void>): void } {
  let redis: RedisServer | undefined;
  const closers: (() => Promise<void>)[] = [];
  before(async () => (redis = await startRedis()));
  after(() => redis?.close());
  afterEach(async () => {
    while (closers.length) await closers.pop()!();
  });
  return {
    server: () => redis!,
    closeAfterTest: (close) => void closers.push(close),
  };
}
