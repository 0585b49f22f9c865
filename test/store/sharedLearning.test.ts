/**
 * What the pool learns from usage (docs/shared-pool.md): each router's learners count the usage
 * every router of the pool served, and a router that joins later starts from the pool's learners.
 * Real RouterStates sharing through a real redis-server (in this process: the learners have no
 * HTTP face to read them by).
 */
import { strict as assert } from 'node:assert';
import { RouterState } from '../../src/proxy/state/routerState';
import { shareState, type SharedState } from '../../src/proxy/state/sharedState';
import { StoreConnection } from '../../src/store/connection';
import { parseStoreUrl } from '../../src/config/storeUrl';
import { redisForSuite } from '../support/redisSuite';
import { until } from '../support/sharedPool';

/** The pool's key, the same for every router of the test. */
const KEY = Buffer.alloc(32, 5);

const quiet = { info: () => undefined, warn: () => undefined };
const TOKENS = { inputTokens: 1_000, cacheReadTokens: 10_000, cacheWriteTokens: 0, outputTokens: 500 };

describe('shared pool: learned costs', function () {
  this.timeout(30_000);
  const suite = redisForSuite();

  /** A router's state sharing through the store. */
  async function router(): Promise<{ state: RouterState; shared: SharedState }> {
    const conn = new StoreConnection(parseStoreUrl(suite.server().url), { log: quiet, key: KEY });
    await conn.start();
    const state = new RouterState(3_600_000);
    const shared = shareState(state, conn, { log: quiet });
    await shared.reconcile();
    suite.closeAfterTest(async () => {
      await shared.close();
      await conn.close();
    });
    return { state, shared };
  }

  const pending = (state: RouterState) => state.learnedCosts.toSaved().a?.['5h']?.pendingTokens ?? 0;

  it("counts the usage every router served in each router's learners, and gives a late router the pool's", async () => {
    const one = await router();
    const two = await router();
    for (let i = 0; i < 3; i++) one.state.recordServed('a', null, TOKENS, undefined, Date.now());
    two.state.recordServed('a', null, TOKENS, undefined, Date.now());
    const all = 4 * (1_000 + 500 + 0.1 * 10_000);
    await until(() => pending(one.state) === all && pending(two.state) === all, 1_000, 'both learners to count all four answers');

    await one.shared.reconcile(); // what the heartbeat does every 30 s
    const late = await router();
    assert.equal(pending(late.state), all, 'a router that joins later starts from the pool');
  });
});
