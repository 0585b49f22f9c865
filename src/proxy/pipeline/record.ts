/**
 * Step 8: what happened, on record — the counters, a state change for the
 * views, and the request's decision record.
 */
import { buildDecisionRecord } from '../../routing/decision';
import type { RequestContext } from './context';

/** Counts the outcome and appends the decision record. */
export function record(ctx: RequestContext): void {
  const s = ctx.services;
  const { outcome, info, requestId } = ctx;
  s.state.countOutcome(outcome.outcome);

  const decision = buildDecisionRecord(
    {
      ts: new Date(ctx.startedAtMs).toISOString(),
      requestId,
      stickyKeySource: info.sticky.source,
      stickyKind: info.sticky.kind,
      stickyKeyHash: info.sticky.keyHash,
      path: ctx.path,
      model: info.model,
      stream: info.stream ?? outcome.streamed,
    },
    ctx.plan,
    ctx.generation.config.policy,
    {
      servedBy: outcome.servedBy?.id ?? null,
      servedByFallback: outcome.servedBy?.fallback ?? false,
      attempts: outcome.attempts,
      waits: ctx.waits,
      outcome: outcome.outcome,
      status: outcome.status,
      usage: outcome.usage,
      durationMs: s.now() - ctx.startedAtMs,
    },
  );
  s.decisions.append(decision);
  if (s.log.debugEnabled?.() ?? true) {
    s.log.debug(`decision ${requestId} session=${info.sticky.keyHash ?? '-'} reason=${ctx.plan.selectionReason} served=${decision.servedBy ?? '-'} outcome=${outcome.outcome}`);
  }
}
