/**
 * Probes on the request path (rules: src/routing/probe.ts, docs/routing.md#recovery-probes): which
 * accounts may take one now (read when planning), the ticket a Messages request takes for its
 * plan's probe in the same synchronous section as the plan (so two requests never probe one
 * account at once), and how the attempt on that account ends it.
 */
import type { AccountMetrics } from '../../routing/metrics';
import { probeKindOf, type ProbeKind } from '../../routing/probe';
import type { RouterState } from '../state/routerState';
import type { AttemptStep } from './tryAccount';
import type { RequestContext } from './context';

/**
 * The probe `label` may take at `now` (epoch ms), or undefined: a `recovery` or `evidence` probe
 * per src/routing/probe.ts, when none is in flight on it and its back-off is over.
 * @param reportsQuota an OAuth account (an API key reports no quota and is never probed)
 */
export function probeFor(state: RouterState, label: string, reportsQuota: boolean, metrics: AccountMetrics, now: number): ProbeKind | undefined {
  // Most accounts are usable with known quota: nothing to look up.
  if (!reportsQuota || (metrics.unusableReason !== 'cooldown' && !(metrics.usable && metrics.freshness === 'unknown'))) return undefined;
  const kind = probeKindOf({ metrics, cooldown: state.cooldowns.get(label), snapshot: state.snapshots.get(label), needsSignIn: state.needsSignIn.has(label), reportsQuota }, now);
  return kind !== undefined && state.probes.may(label, now) ? kind : undefined;
}

/** Takes the ticket of the plan's probe (a Messages call only), right after planning. */
export function takeProbe(ctx: RequestContext): void {
  const p = ctx.plan.probe;
  if (p && ctx.route === 'messages') ctx.probe = ctx.services.state.probes.begin(p.account, p.kind, ctx.services.now());
}

/** Whether `label` is this request's probe: tried first, even though its cooldown still runs. */
export function isProbeAttempt(ctx: RequestContext, label: string): boolean {
  return ctx.probe?.account === label;
}

/**
 * Ends the request's probe by its attempt's outcome: a recovery probe succeeds when the account
 * served (its cooldown is then lifted), an evidence probe when the account has quota evidence
 * now; a client that left first decides nothing. A failed probe backs the next one off.
 */
export function endProbe(ctx: RequestContext, step: AttemptStep): void {
  const ticket = ctx.probe;
  if (!ticket) return;
  const s = ctx.services;
  let ok: boolean | undefined;
  if (step.next === 'abort') ok = undefined;
  else if (ticket.kind === 'recovery') ok = step.next === 'served';
  else ok = s.state.snapshots.has(ticket.account);
  if (ok && ticket.kind === 'recovery') s.state.clearCooldown(ticket.account, 'window_exhausted');
  ticket.end(ok, s.now());
  s.log.info(`probe ${ctx.requestId}: ${ticket.kind} probe of ${ticket.account} ${ok === undefined ? 'not finished' : ok ? 'succeeded' : 'failed'}`);
}
