/**
 * Replay: re-rank each recorded decision's candidates (their recorded
 * metrics) with the current pure ranking and compare with the recorded
 * ranking order — the seed's default-equivalence check. Only the ranking is
 * replayed (before affinity, primary and spill). A decision of another
 * strategy that recorded its `strategyInputs` is planned again whole (the
 * draws are seeded by its request id) and its try order compared. Pure.
 */
import { metricsFromRecord, type DecisionRecord } from './decision';
import { planRoute, type PlanAccount } from './plan';
import type { RoutingPolicy } from './policy';
import { recordedPolicy } from './recordedPolicy';
import { rankAccounts, type AccountRanking, type RankCandidate } from './ranking';

/** One decision whose order differs. */
export interface ReplayDifference {
  requestId: string;
  ts: string;
  recorded: string[];
  replayed: string[];
}

export interface ReplayResult {
  /** Records re-ranked. */
  compared: number;
  /** Records skipped (round-robin, quota routing off, another ranking unless `all`). */
  skipped: number;
  differences: ReplayDifference[];
}

/** Whether a record's ranking order came from the quota ranking at all. */
function replayable(r: DecisionRecord): boolean {
  return r.strategy === 'fill-first' && r.policy?.quotaRouting !== false && Array.isArray(r.candidates) && Array.isArray(r.rankingOrder);
}

/**
 * @param records decision records (as `readDecisionRecord` gives them)
 * @param ranking the ranking to replay with
 * @param all re-rank records made under another ranking too (a what-if), not only those made under `ranking`
 */
export function replayDecisions(records: Iterable<DecisionRecord>, ranking: AccountRanking, all = false): ReplayResult {
  const out: ReplayResult = { compared: 0, skipped: 0, differences: [] };
  for (const r of records) {
    if (r.strategyInputs && Array.isArray(r.candidates)) {
      const replayed = replanOrder(r);
      const recorded = r.candidates.map((c) => c.account);
      out.compared++;
      if (replayed.join('\u0000') !== recorded.join('\u0000')) out.differences.push({ requestId: r.requestId, ts: r.ts, recorded, replayed });
      continue;
    }
    if (!replayable(r) || (!all && r.ranking !== ranking)) {
      out.skipped++;
      continue;
    }
    const candidates: RankCandidate[] = r.candidates
      .filter((c) => !c.fallback)
      .map((c) => ({ id: c.account, index: c.index, isPrimary: c.primary, metrics: metricsFromRecord(c.metrics) }));
    const replayed = rankAccounts(candidates, ranking).order.map((c) => c.id);
    out.compared++;
    if (replayed.join('\u0000') !== r.rankingOrder.join('\u0000')) {
      out.differences.push({ requestId: r.requestId, ts: r.ts, recorded: r.rankingOrder, replayed });
    }
  }
  return out;
}

/** The try order a record's strategy gives when its request is planned again from the record alone. */
export function replanOrder(r: DecisionRecord): string[] {
  const si = r.strategyInputs!;
  const accounts: PlanAccount[] = [...r.candidates]
    .sort((a, b) => a.index - b.index)
    .map((c) => ({
      id: c.account,
      index: c.index,
      isPrimary: c.primary,
      fallback: c.fallback,
      inflight: c.inflight,
      metrics: metricsFromRecord(c.metrics),
      priority: si.accounts[c.account]?.priority,
      costTier: si.accounts[c.account]?.costTier,
      planSize: si.accounts[c.account]?.planSize,
      latencyFactor: si.accounts[c.account]?.latencyFactor,
      recentErrorRate: si.accounts[c.account]?.recentErrorRate,
      reserved: si.accounts[c.account]?.reserved,
      learnedCosts: si.accounts[c.account]?.learnedCosts,
      boundWork: si.accounts[c.account]?.boundWork,
      // The probe table is not in the record; the probe it gave is.
      probe: r.probe?.account === c.account ? r.probe.kind : undefined,
    }));
  const recorded = recordedPolicy(r);
  // Only Messages calls spill (src/proxy/pipeline/plan.ts).
  const policy: RoutingPolicy = r.path === '/v1/messages' ? recorded : { ...recorded, spillInflight: 0 };
  const bound = r.affinity.boundAccount;
  const plan = planRoute({
    accounts,
    policy,
    sessionId: r.stickyKeyHash,
    binding: bound === null ? undefined : { account: bound, lastServedAtMs: si.nowMs },
    roundRobinCursor: si.roundRobinCursor,
    requestId: r.requestId,
    nowMs: si.nowMs,
    sessionTokensPerMs: si.sessionTokensPerMs,
    sessionHorizonMs: si.sessionHorizonMs,
  });
  return plan.order.map((a) => a.id);
}
