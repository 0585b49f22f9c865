/**
 * `fill-first`: every account in `account-ranking` order (expiry-first or headroom-first, the
 * comparators of src/routing/ranking.ts, unchanged); with quota routing off, configured order.
 */
import { comparatorFor, rankAccounts, rankContextFor, type RankContext } from '../../ranking';
import type { PlanAccount, SelectionReason } from '../types';
import { configuredOrder } from './common';
import type { Strategy } from './strategy';

export const fillFirst: Strategy = {
  name: 'fill-first',
  summary: 'one account takes the traffic until another ranks first (by account-ranking)',
  description:
    'Try accounts in `accountRanking` order: the best account takes traffic until it stops being the best. Drains one account at a time; affinity, prefer-primary, prefer-earlier-reset and spill apply.',
  modifiers: new Set(['affinity', 'prefer-primary', 'prefer-earlier-reset', 'spill', 'evidence-probe']),
  bindsSessions: true,
  order(input) {
    if (input.policy.quotaRouting) {
      const r = rankAccounts(input.all, input.policy.accountRanking);
      return { order: r.order as PlanAccount[], reason: r.reason };
    }
    const order = configuredOrder(input.all);
    const reason: SelectionReason = order.length > 1 && order[0].metrics.usable && !order[1].metrics.usable ? 'availability' : 'configured_order';
    return { order, reason };
  },
  lossReason(winner, loser, input) {
    if (!input.policy.quotaRouting) return 'configured_order';
    const ctx = (input.memo ??= rankContextFor(input.all)) as RankContext;
    return comparatorFor(input.policy.accountRanking)(winner, loser, ctx).reason;
  },
};
