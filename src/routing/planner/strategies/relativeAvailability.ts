/**
 * `relative-availability`: availability = remaining weekly capacity (fraction) ÷ hours to the
 * weekly reset (7 days when none is pending, at least one minute). A weighted draw among the top
 * `relative-availability-top-k` accounts by availability, weight ∝ availability ^
 * `relative-availability-power` (× the latency modifier's factor, 0.5–1); the rest follow by
 * availability. Seeded from the request id.
 */
import type { PlanAccount } from '../types';
import { latencyFactor, tailLoss, weeklyRemaining, weightedDraw, withTails } from './common';
import type { OrderInput, Strategy } from './strategy';

const HOUR_MS = 3_600_000;
const WEEK_H = 168;

/** Remaining weekly fraction per hour to the weekly reset. */
export function availability(a: PlanAccount, nowMs: number): number {
  const reset = a.metrics.weeklyResetMs;
  const hours = Number.isFinite(reset) ? Math.min(WEEK_H, Math.max(1 / 60, (reset - nowMs) / HOUR_MS)) : WEEK_H;
  return weeklyRemaining(a) / hours;
}

function order(input: OrderInput): PlanAccount[] {
  const scored = input.eligible.map((a) => ({ a, v: availability(a, input.nowMs) }));
  scored.sort((x, y) => (x.v > y.v ? -1 : x.v < y.v ? 1 : x.a.index - y.a.index));
  const k = Math.max(1, input.policy.relativeAvailabilityTopK);
  const power = input.policy.relativeAvailabilityPower;
  const top = scored.slice(0, k);
  const value = new Map(top.map((s) => [s.a, s.v]));
  const drawn = weightedDraw(
    top.map((s) => s.a),
    (a) => Math.pow(value.get(a) ?? 0, power) * latencyFactor(a),
    input.random,
  );
  return [...drawn, ...scored.slice(k).map((s) => s.a)];
}

export const relativeAvailability: Strategy = {
  name: 'relative-availability',
  summary: 'draws among the top-k accounts by remaining capacity per hour to the weekly reset',
  description:
    'A draw among the `relativeAvailabilityTopK` accounts with the most remaining capacity per hour to their weekly reset: prefers healthy accounts without all traffic shifting at once. Affinity, spill and latency weighting apply.',
  modifiers: new Set(['affinity', 'spill', 'latency']),
  bindsSessions: true,
  order: (input) => withTails(input, order(input), 'availability_draw'),
  lossReason: (winner, loser) => tailLoss(winner, loser, 'availability_draw'),
};
