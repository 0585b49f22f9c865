/**
 * `weighted`: each eligible account scores
 *   w.affinity·is_sticky_owner + w.headroom·headroom + w.priority·priority − w.load·inflight/limit
 *   − w.errors·recent_error_rate − w.cost·cost_tier
 * and the highest goes first. Weights are fractions (0–1) from the `weighted-preset`, each
 * overridden by `weights.*`. headroom is a fraction (unknown reads 1); priority and cost tier are
 * normalised over the eligible accounts to 0–1 (so how far apart two tiers are gets lost — see
 * docs/strategies.md); limit is `max-inflight-per-account`, else `spill-inflight`, else 4 (never 0).
 * Equal scores are ordered by a hash of the session key and the account label, so a session keeps
 * its order and a replay reproduces it. Affinity is inside the score; only spill modifies it.
 */
import type { RoutingPolicy } from '../../policy';
import type { PlanAccount } from '../types';
import { hash32 } from '../random';
import { tailLoss, withTails } from './common';
import type { OrderInput, Strategy } from './strategy';

/** Score weights, fractions 0–1. */
export interface Weights {
  affinity: number;
  headroom: number;
  priority: number;
  load: number;
  errors: number;
  cost: number;
}

/** The presets (`weighted-preset`). */
export const WEIGHTED_PRESETS = {
  /** Affinity, then most headroom. */
  'sticky-headroom': { affinity: 0.5, headroom: 0.3, priority: 0, load: 0.1, errors: 0.1, cost: 0 },
  /** sticky-headroom with affinity off. */
  headroom: { affinity: 0, headroom: 0.8, priority: 0, load: 0.1, errors: 0.1, cost: 0 },
  /** Fewest requests in flight per limit. */
  'least-loaded': { affinity: 0, headroom: 0, priority: 0, load: 1, errors: 0, cost: 0 },
  /** Strict ordered failover by per-account priority. */
  priority: { affinity: 0, headroom: 0, priority: 1, load: 0, errors: 0, cost: 0 },
  /** Cheapest tier first (re-homes conversations: see docs/strategies.md). */
  'cost-tiered': { affinity: 0.2, headroom: 0, priority: 0, load: 0, errors: 0, cost: 0.8 },
} as const satisfies Record<string, Weights>;

export type WeightedPreset = keyof typeof WEIGHTED_PRESETS;

/** In-flight limit when neither a cap nor a spill threshold is configured. */
export const DEFAULT_LOAD_LIMIT = 4;

/** The effective weights of a policy: its preset, each weight overridden by `weights.*`. */
export function weightsOf(policy: RoutingPolicy): Weights {
  const preset: Weights = (WEIGHTED_PRESETS as Record<string, Weights>)[policy.weightedPreset] ?? WEIGHTED_PRESETS['sticky-headroom'];
  return { ...preset, ...policy.weights };
}

interface Scored {
  a: PlanAccount;
  score: number;
  /** Tie key, unsigned 32-bit; −1 until needed. */
  tie: number;
}

function score(input: OrderInput): Scored[] {
  const w = weightsOf(input.policy);
  const limit = input.policy.maxInflightPerAccount || input.policy.spillInflight || DEFAULT_LOAD_LIMIT;
  const owner = input.binding?.account;
  const span = (xs: number[]) => {
    const lo = Math.min(...xs);
    const hi = Math.max(...xs);
    return (x: number) => (hi > lo ? (x - lo) / (hi - lo) : 0);
  };
  const prio = span(input.eligible.map((a) => a.priority ?? 0));
  const cost = span(input.eligible.map((a) => a.costTier ?? 1));
  const out = input.eligible.map((a): Scored => ({
    a,
    score:
      w.affinity * (a.id === owner ? 1 : 0) +
      w.headroom * (a.metrics.headroom ?? 1) +
      w.priority * prio(a.priority ?? 0) -
      w.load * (a.inflight / limit) -
      w.errors * (a.recentErrorRate ?? 0) -
      w.cost * cost(a.costTier ?? 1),
    tie: -1,
  }));
  // The tie key is hashed only for accounts that tie on score.
  const tie = (s: Scored) => (s.tie >= 0 ? s.tie : (s.tie = mix32(input.sessionHash() ^ hash32(s.a.id))));
  out.sort((x, y) => (x.score > y.score ? -1 : x.score < y.score ? 1 : tie(x) !== tie(y) ? tie(x) - tie(y) : x.a.index - y.a.index));
  const byAccount = new Map<PlanAccount, number>();
  for (const s of out) byAccount.set(s.a, s.score);
  input.memo = byAccount;
  return out;
}

/** A 32-bit finaliser (murmur3 fmix32): spreads the session hash over the tie order. */
function mix32(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export const weighted: Strategy = {
  name: 'weighted',
  summary: 'highest score of affinity, headroom, priority, load, errors and cost (weights from a preset)',
  description: 'The highest score of affinity, headroom, priority, load, errors and cost (`weightedPreset`, `weights`): tunable; ties follow the session. Spill applies.',
  modifiers: new Set(['spill']),
  bindsSessions: true,
  readsErrorRate: true,
  order(input) {
    const s = score(input);
    return withTails(
      input,
      s.map((x) => x.a),
      s.length >= 2 && s[0].score === s[1].score ? 'score_tie' : 'weighted_score',
    );
  },
  lossReason(winner, loser, input) {
    const scores = input.memo as Map<PlanAccount, number> | undefined;
    const w = scores?.get(winner);
    return tailLoss(winner, loser, w !== undefined && w === scores?.get(loser) ? 'score_tie' : 'weighted_score');
  },
};
