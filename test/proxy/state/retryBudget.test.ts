import { strict as assert } from 'node:assert';
import { RETRIES_PER_COOLING_WINDOW, RetryBudget } from '../../../src/proxy/state/retryBudget';

const T = 1_700_000_000_000;

describe('proxy/state RetryBudget', () => {
  it('gives two retries per account per cooling window, shared by every request; a new window starts afresh', () => {
    const budget = new RetryBudget();
    assert.equal(RETRIES_PER_COOLING_WINDOW, 2);
    assert.equal(budget.take('a', T + 1_000, T), true);
    assert.equal(budget.take('a', T + 1_050, T + 50), true, 'a second request in the same window');
    assert.equal(budget.take('a', T + 1_100, T + 100), false, 'the third moves on');
    assert.equal(budget.take('b', T + 1_000, T + 100), true, 'each account has its own budget');
    assert.equal(budget.take('a', T + 3_000, T + 2_000), true, 'a throttle after the window ended opens a new one');
  });

  it('a later throttle in the window stretches it', () => {
    const budget = new RetryBudget();
    budget.take('a', T + 1_000, T);
    budget.take('a', T + 5_000, T + 500);
    assert.equal(budget.take('a', T + 5_000, T + 2_000), false, 'still the same window at +2 s');
  });
});
