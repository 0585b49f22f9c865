/**
 * `round-robin`: each Messages request starts one usable account further along the configured
 * order; unusable accounts go last in configured order. Ignores quota shape; no modifier applies
 * and no session is bound.
 */
import { configuredOrder } from './common';
import type { Strategy } from './strategy';

export const roundRobin: Strategy = {
  name: 'round-robin',
  summary: 'rotates through the usable accounts per request, ignoring quota shape',
  description: 'Each request starts one usable account further along; ignores quota shape and every other routing setting, and never binds sessions.',
  modifiers: new Set(),
  bindsSessions: false,
  order(input) {
    const usable = input.all.filter((a) => a.metrics.usable);
    const rankingOrder = configuredOrder(input.all).map((a) => a.id);
    if (usable.length === 0) return { order: configuredOrder(input.all), reason: input.all.length ? 'round_robin' : 'no_account', rankingOrder };
    const start = input.roundRobinCursor % usable.length;
    const order = [...usable.slice(start), ...usable.slice(0, start), ...input.all.filter((a) => !a.metrics.usable)];
    return { order, reason: 'round_robin', rankingOrder };
  },
  lossReason: () => 'round_robin',
};
