import { strict as assert } from 'node:assert';
import { clientRetry, CLIENT_RETRY_AFTER_MAX_S } from '../../src/routing/clientRetry';

describe('clientRetry: how a wait is told to the client', () => {
  it('within the horizon: keep retrying, retry-after capped at 60 s, the real wait kept for the message', () => {
    assert.deepEqual(clientRetry(100_000, 600_000), { retry: true, retryAfterS: CLIENT_RETRY_AFTER_MAX_S, waitS: 100 });
    assert.deepEqual(clientRetry(1_000, 600_000), { retry: true, retryAfterS: 1, waitS: 1 });
    assert.deepEqual(clientRetry(0, 600_000), { retry: true, retryAfterS: 1, waitS: 1 }, 'never a retry-after of 0');
    assert.deepEqual(clientRetry(600_000, 600_000), { retry: true, retryAfterS: 60, waitS: 600 }, 'the horizon itself is within');
  });

  it('past the horizon, or with it off (0): final, the whole wait', () => {
    assert.deepEqual(clientRetry(600_001, 600_000), { retry: false, retryAfterS: 601, waitS: 601 });
    assert.deepEqual(clientRetry(100_000, 0), { retry: false, retryAfterS: 100, waitS: 100 });
    assert.equal(clientRetry(Infinity, 600_000).retry, false);
  });
});

describe('clientRetry: usage windows on every account', () => {
  it('are final however soon the first clears: the user has hit the limit everywhere', () => {
    assert.deepEqual(clientRetry(30_000, 600_000, true), { retry: false, retryAfterS: 30, waitS: 30 });
  });
});
