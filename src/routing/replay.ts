/**
 * Replay: re-rank each recorded decision's candidates (their recorded
 * metrics) with the current pure ranking and compare with the recorded
 * ranking order — the seed's default-equivalence check. Only the ranking is
 * replayed (before affinity, primary and spill). Pure.
 */
import { metricsFromRecord, type DecisionRecord } from './decision';
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
