/**
 * `single-account`: only `single-account-label` (default: the primary, else the first configured
 * account). No failover — not to another account, not to a fallback: when it is ineligible the
 * client gets the usual "no usable account" answer.
 */
import type { OrderInput } from './strategy';
import type { Strategy } from './strategy';

function pinned(input: OrderInput) {
  const label = input.policy.singleAccountLabel ?? input.policy.primaryAccount;
  return label === undefined
    ? input.all.reduce<(typeof input.all)[number] | undefined>((m, a) => (m === undefined || a.index < m.index ? a : m), undefined)
    : input.all.find((a) => a.id === label);
}

export const singleAccount: Strategy = {
  name: 'single-account',
  summary: 'pins all traffic to one account; no load balancing, no failover',
  description: 'Only `singleAccountLabel` (default: the primary): isolation and debugging; no load balancing and no failover.',
  modifiers: new Set(),
  bindsSessions: false,
  noFailover: true,
  order(input) {
    const a = pinned(input);
    return a ? { order: [a], reason: 'pinned_account' } : { order: [], reason: 'no_account' };
  },
  lossReason: () => 'pinned_account',
};
