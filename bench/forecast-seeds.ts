/**
 * `forecast` against both rankings of fill-first (all with affinity) on generated weeks of several
 * seeds (src/whatif/generate.ts, WEEK_SHAPE with another seed), in virtual time: per seed, the
 * allowance unused at weekly resets (points of an account's week, by reset), hours with ≥ 2 usable
 * accounts, mid-session switches and refused requests, and which part of the issue's bar (issue 16)
 * forecast meets. The table of docs/policies.md#forecast-on-the-generated-week. Not part of the suite.
 *
 *   node out/bench/forecast-seeds.js            (FORECAST_SEEDS=1,2,3 picks the seeds; default 1–6)
 */
import { DEFAULT_POLICY, type RoutingPolicy } from '../src/routing/policy';
import type { PolicyReport } from '../src/routing/report';
import { refusedOf } from '../src/whatif/compare';
import { generateWorkload, WEEK_SHAPE } from '../src/whatif/generate';
import { simulate } from '../src/whatif/simulate';

const POLICIES: Array<[string, Partial<RoutingPolicy>]> = [
  ['fill-first:expiry-first', { strategy: 'fill-first', accountRanking: 'expiry-first' }],
  ['fill-first:headroom-first', { strategy: 'fill-first', accountRanking: 'headroom-first' }],
  ['forecast', { strategy: 'forecast' }],
];

const points = (f: number) => (100 * f).toFixed(1);

function row(name: string, r: PolicyReport): string {
  const byReset = r.weeklyResets
    .filter((w) => w.unusedFraction >= 0.0005)
    .map((w) => `${w.account} ${new Date(w.resetAtMs).toISOString().slice(5, 13)} ${points(w.unusedFraction)}`)
    .join(', ');
  return `  ${name.padEnd(26)} unused ${points(r.unusedWeeklyAllowance).padStart(5)} (${byReset || 'none'})  hours ≥ 2 usable ${r.hoursAtLeastTwoUsable.toFixed(1)}  switches ${r.midSessionSwitches}  refused ${refusedOf(r)}`;
}

const seeds = (process.env.FORECAST_SEEDS ?? '1,2,3,4,5,6').split(',').map(Number);
for (const seed of seeds) {
  const w = generateWorkload({ ...WEEK_SHAPE, seed });
  const [expiry, headroom, forecast] = POLICIES.map(([name, over]) => simulate(w, { name, policy: { ...DEFAULT_POLICY, sessionAffinity: true, ...over } }).report);
  const unusedOver = forecast.unusedWeeklyAllowance - (expiry.unusedWeeklyAllowance + 0.01);
  const hoursShort = headroom.hoursAtLeastTwoUsable - forecast.hoursAtLeastTwoUsable;
  const switchesOver = forecast.midSessionSwitches - Math.min(expiry.midSessionSwitches, headroom.midSessionSwitches);
  const misses = [
    unusedOver > 0 ? `unused ${points(unusedOver)} points over the bar` : '',
    hoursShort > 0 ? `${hoursShort.toFixed(2)} h short of headroom-first` : '',
    switchesOver > 0 ? `${switchesOver} switch(es) over` : '',
  ].filter(Boolean);
  process.stdout.write(`seed ${seed} (${w.requests.length} requests): ${misses.length ? `misses: ${misses.join('; ')}` : 'meets the bar'}\n`);
  for (const [i, r] of [expiry, headroom, forecast].entries()) process.stdout.write(row(POLICIES[i][0], r) + '\n');
}
