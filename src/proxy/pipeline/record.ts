/**
 * Step 8: what happened, on record — the counters, a state change for the
 * views, and the request's decision record.
 */
import { modelFamily } from '../../quota/family';
import { buildDecisionRecord, usageTokens } from '../../routing/decision';
import { strategyFor } from '../../routing/planner/strategies/registry';
import { isAccountFailure } from '../state/accountPerformance';
import type { RequestContext } from './context';

/** Fewer output tokens than this measure no rate (the time is mostly the first token's). */
const MIN_RATE_TOKENS = 16;

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
      requestClass: ctx.requestClass,
      promptIdHash: ctx.promptIdHash,
      agentIdHash: ctx.agentIdHash,
      contextCompacted: ctx.contextCompacted,
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
  const served = outcome.servedBy;
  if (ctx.route === 'messages' && outcome.outcome === 'success' && served && !served.fallback && outcome.usage) {
    const tracksSessions = strategyFor(ctx.generation.config.policy.strategy).readsForecast === true;
    s.state.recordServed(served.id, tracksSessions ? info.sticky.keyHash : null, usageTokens(outcome.usage), modelFamily(info.model ?? undefined), s.now());
  }
  if (ctx.route === 'messages') {
    recordPerformance(ctx, decision.durationMs);
    countServed(ctx);
  }
  if (s.log.debugEnabled?.() ?? true) {
    s.log.debug(`decision ${requestId} session=${info.sticky.keyHash ?? '-'} reason=${ctx.plan.selectionReason} served=${decision.servedBy ?? '-'} outcome=${outcome.outcome}`);
  }
}

/** Counts the request and its tokens in the serving account's history (the panel's requests and tokens over time). */
function countServed(ctx: RequestContext): void {
  const served = ctx.outcome.servedBy;
  if (!served) return;
  const u = ctx.outcome.usage;
  const tokens = u ? { inputTokens: u.inputTokens, outputTokens: u.outputTokens, cacheReadTokens: u.cacheReadInputTokens, cacheCreationTokens: u.cacheCreationInputTokens } : null;
  ctx.services.state.history.count(served.id, tokens, ctx.services.now());
}

/**
 * Feeds the accounts' recent performance: every attempt (failed or not), and the latency of a
 * successful single-attempt streamed turn — one that waited for nothing else, so its times are
 * the account's own.
 */
function recordPerformance(ctx: RequestContext, durationMs: number): void {
  const { state } = ctx.services;
  const { outcome } = ctx;
  const now = ctx.services.now();
  for (const a of outcome.attempts) if (a.result !== 'client_abort') state.performance.recordAttempt(a.account, now, isAccountFailure(a.result));
  const served = outcome.servedBy;
  const usage = outcome.usage;
  if (outcome.outcome !== 'success' || !outcome.streamed || outcome.attempts.length !== 1 || !served || served.fallback || !usage) return;
  const firstTokenMs = outcome.attempts[0].ms;
  const afterFirstS = (durationMs - firstTokenMs) / 1000;
  state.performance.recordTurn(served.id, {
    atMs: now,
    firstTokenMs,
    uncachedInputTokens: usage.inputTokens + usage.cacheCreationInputTokens,
    outputTokensPerS: usage.outputTokens >= MIN_RATE_TOKENS && afterFirstS > 0 ? usage.outputTokens / afterFirstS : undefined,
    family: modelFamily(ctx.info.model ?? undefined),
  });
}
