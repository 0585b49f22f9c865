/**
 * Notices a herd as it starts to move, however the router learned that an account which carried
 * traffic stopped taking it: an answer's headers (even a 200's), the usage poller, a peer router
 * through the shared store, a config change, a failed attempt. The plan of the first request that
 * goes elsewhere shows it, whatever the source, so this looks there: the accounts that then take
 * the moving traffic start the admission ramp (docs/routing.md#admission-ramp). A failed attempt
 * opens the same window in `settle()` (admission.ts).
 *
 * Per request on a steady pool: a field read and one string comparison.
 */
import { isTransientCooldown } from '../../quota/cooldown';
import type { PlanAccount } from '../../routing/plan';
import type { RequestContext, RouterServices } from './context';

/** After an account that carried traffic becomes unusable, idle accounts ramp up what they take for this long: 10 s, in ms (the herd of its sessions arrives within it). */
export const HERD_WINDOW_MS = 10_000;

/**
 * Opens (or extends) the herd window at `now` (epoch ms) when the plan just made shows traffic
 * leaving an account that stopped taking it for a reason that is not transient (a transient pause
 * moves no herd: its sessions wait for it or come back):
 * - a bound session's account was skipped (unusable, past the session soft limit, over a sticky threshold);
 * - the account new traffic went to at the previous request is not first now, and is unusable,
 *   past the soft limit, or gone from the configuration.
 * Call once per planned Messages request, after the plan.
 */
export function noteMovingTraffic(ctx: RequestContext, now: number): void {
  const s = ctx.services;
  const plan = ctx.plan;
  const t = s.state.concurrency;
  const first = plan.order[0]?.id;
  const previous = t.lastFirstChoice;
  t.lastFirstChoice = first;
  if (!ctx.generation.config.policy.admissionRamp) return;
  const skipped = plan.affinity.skippedReason;
  if (skipped === 'unusable' || skipped === 'session_saturated' || skipped === 'over_sticky_threshold') {
    if (leftForGood(s, plan.affinity.boundAccount!)) openHerdWindow(s, now);
    return;
  }
  if (previous === undefined || previous === first) return;
  const before = findAccount(plan.order, previous);
  if ((before === undefined || !before.metrics.usable || before.metrics.sessionSaturated) && leftForGood(s, previous)) openHerdWindow(s, now);
}

/** Opens the herd window at `now` (epoch ms) for {@link HERD_WINDOW_MS}: an idle account that takes a request within it starts a ramp. */
export function openHerdWindow(s: RouterServices, now: number): void {
  s.state.concurrency.herdUntilMs = now + HERD_WINDOW_MS;
}

/** The account is left for a reason that is not a transient pause (none, or a cooldown that is not transient). */
function leftForGood(s: RouterServices, label: string): boolean {
  return !isTransientCooldown(s.state.cooldowns.get(label)?.reason);
}

function findAccount(order: readonly PlanAccount[], label: string): PlanAccount | undefined {
  for (const a of order) if (a.id === label) return a;
  return undefined;
}
