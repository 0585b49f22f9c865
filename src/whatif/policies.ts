/**
 * The policies a simulation compares: catalogue names (`fill-first:headroom-first`,
 * `round-robin`, …) applied to the log's own policy, and the names the table shows. Pure.
 */
import type { AccountRanking } from '../routing/ranking';
import { STRATEGY_NAMES } from '../routing/planner/strategies/registry';
import type { RoutingPolicy } from '../routing/policy';

/** The account rankings (`account-ranking`); only `fill-first` reads one. */
export const RANKINGS: readonly AccountRanking[] = ['expiry-first', 'headroom-first'];

/** A catalogue name: a strategy, and for a ranked strategy its ranking. */
export interface PolicyName {
  strategy: string;
  ranking?: AccountRanking;
}

/** Every policy of the catalogue (`--all`): `fill-first` under each ranking, then each other strategy, in catalogue order. */
export function catalogueNames(): string[] {
  return STRATEGY_NAMES.flatMap((s) => (s === 'fill-first' ? RANKINGS.map((r) => `${s}:${r}`) : [s]));
}

/**
 * `strategy` or `strategy:ranking` → its parts.
 * @throws Error naming the unknown strategy or ranking and the valid ones
 */
export function parsePolicyName(name: string): PolicyName {
  const [strategy, ranking, ...rest] = name.trim().split(':');
  if (!(STRATEGY_NAMES as readonly string[]).includes(strategy) || rest.length > 0) {
    throw new Error(`unknown strategy "${strategy}" (the catalogue: ${STRATEGY_NAMES.join(', ')})`);
  }
  if (ranking === undefined) return { strategy };
  if (!(RANKINGS as readonly string[]).includes(ranking)) throw new Error(`unknown ranking "${ranking}" (${RANKINGS.join(' or ')})`);
  return { strategy, ranking: ranking as AccountRanking };
}

/** Whether `name` reads as a catalogue name (a strategy of the catalogue, maybe with `:ranking`), not a file. */
export function looksLikePolicyName(name: string): boolean {
  return (STRATEGY_NAMES as readonly string[]).includes(name.split(':')[0]);
}

/** `base` with the strategy (and ranking) of `name` — the change "Choose Routing Strategy" makes, every other key as it was. */
export function withPolicyName(base: Readonly<RoutingPolicy>, name: PolicyName): RoutingPolicy {
  return { ...base, strategy: name.strategy, accountRanking: name.ranking ?? base.accountRanking };
}

/** The catalogue name of a policy: `fill-first:expiry-first`, `round-robin`, … */
export function nameOf(p: Readonly<RoutingPolicy>): string {
  return p.strategy === 'fill-first' ? `${p.strategy}:${p.accountRanking}` : p.strategy;
}

/** The policy in a few words: its name and the keys that change routing, e.g. `fill-first:headroom-first, affinity (idle 60 min), spill 20`. */
export function describePolicy(p: Readonly<RoutingPolicy>): string {
  const parts = [nameOf(p)];
  if (p.sessionAffinity) parts.push(`affinity (idle ${Math.round(p.sessionAffinityIdleTtlMs / 60_000)} min)`);
  if (p.preferPrimary && p.primaryAccount) parts.push(`prefer-primary ${p.primaryAccount}`);
  if (p.spillInflight > 0) parts.push(`spill ${p.spillInflight}`);
  if (p.maxInflightPerAccount > 0) parts.push(`cap ${p.maxInflightPerAccount}`);
  if (p.stickyThreshold5h !== undefined || p.stickyThreshold7d !== undefined) parts.push(`sticky ${p.stickyThreshold5h ?? '–'}/${p.stickyThreshold7d ?? '–'} %`);
  if (p.preferEarlierReset) parts.push('prefer-earlier-reset');
  if (!p.quotaRouting) parts.push('quota routing off');
  return parts.join(', ');
}

/** Two policies route alike: every key equal (an absent key and an undefined one are equal). */
export function samePolicy(a: Readonly<RoutingPolicy>, b: Readonly<RoutingPolicy>): boolean {
  return stableText(a) === stableText(b);
}

/** JSON with object keys sorted, undefined members left out. */
function stableText(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'undefined';
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${stableText(o[k])}`).join(',')}}`;
}
