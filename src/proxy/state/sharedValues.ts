/**
 * The shapes and bounds of what the routers of a pool share (sharedState.ts), checked after the
 * signature (src/store/signedValues.ts) on every value and notification read from Redis: a value
 * outside them is ignored (docs/security.md#the-shared-store). Each reader takes the parsed JSON
 * and the time now (epoch ms) and returns the typed value, or undefined.
 *
 * Bounds: observed and served times within the last 30 days and at most 5 min ahead; reset times
 * at most 8 days ahead (the cooldown planner's own ceiling); a cooldown no longer than its reason
 * allows (a rejected window 8 days, a throttle 15 min, an overload or server error 60 s, a
 * forbidden account 10 min); counts finite, non-negative and small.
 */
import { z } from 'zod';
import { FORBIDDEN_COOLDOWN_MS, OVERLOADED_CEILING_MS, SERVER_ERROR_CEILING_MS, THROTTLE_CEILING_MS, WINDOW_EXHAUSTED_CEILING_MS } from '../../quota/constants';
import type { Cooldown, CooldownReason, QuotaSnapshot } from '../../quota/types';
import type { SavedLearnedCosts, TokensByKind } from '../../quota/learnedCosts';
import type { LearnedLimit } from '../../routing/concurrencyLimit';
import type { CostEstimate } from '../../routing/costEstimate';
import type { RemoteLoad } from './leases';

/** How far ahead of this router's clock another router's "now" may be, ms. */
const SKEW_MS = 5 * 60_000;
/** How old an observation may be to be taken, ms. */
const PAST_MS = 30 * 24 * 3_600_000;
/** The longest a cooldown of each reason can be (what the planner itself may set), ms. */
const COOLDOWN_CEILING_MS: Readonly<Record<CooldownReason, number>> = {
  window_exhausted: WINDOW_EXHAUSTED_CEILING_MS,
  throttle: THROTTLE_CEILING_MS,
  overloaded: OVERLOADED_CEILING_MS,
  server_error: SERVER_ERROR_CEILING_MS,
  forbidden: FORBIDDEN_COOLDOWN_MS,
  needs_sign_in: FORBIDDEN_COOLDOWN_MS,
};
/** A learned concurrency limit's pause is a second or so; a minute is plenty. */
const PAUSE_CEILING_MS = 60_000;

const epochMs = z.number().min(0).max(8.64e15);
const text = z.string().max(64);
/** An account label as the store holds it. */
export const labelSchema = z.string().min(1).max(128);
const count = z.number().min(0).max(1e12);

const windowSchema = z.object({ status: text.optional(), utilization: z.number().min(0).max(100).optional(), resetAtMs: epochMs.optional(), observedAtMs: epochMs.optional() });
const snapshotSchema = z.object({
  observedAtMs: epochMs,
  source: z.enum(['headers', 'usage']),
  unifiedStatus: text.optional(),
  unifiedResetAtMs: epochMs.optional(),
  representativeClaim: text.optional(),
  unifiedObservedAtMs: epochMs.optional(),
  session: windowSchema.optional(),
  weekly: windowSchema.optional(),
  scoped: z.record(text, windowSchema.extend({ observedAtMs: epochMs })).refine((r) => Object.keys(r).length <= 32),
  overage: z
    .object({
      status: text.optional(),
      inUse: z.boolean().optional(),
      resetAtMs: epochMs.optional(),
      utilization: z.number().min(0).max(100).optional(),
      disabledReason: text.optional(),
      observedAtMs: epochMs.optional(),
    })
    .optional(),
});
const cooldownSchema = z.object({
  untilMs: epochMs,
  reason: z.enum(['window_exhausted', 'throttle', 'overloaded', 'forbidden', 'server_error', 'needs_sign_in']),
  windows: z.array(z.string().max(32)).max(8).optional(),
  setAtMs: epochMs,
});
const costSchema = z.object({ inputTokens: count, cacheReadTokens: count, cacheWriteTokens: count, outputTokens: count });
const inflightSchema = z.record(labelSchema, z.tuple([z.int().min(0).max(100_000), costSchema.nullable()])).refine((r) => Object.keys(r).length <= 256);
const limitSchema = z.object({
  limit: z.int().min(1).max(100_000),
  credit: count,
  throttledAt: z.int().min(0).max(100_000),
  lastThrottleAtMs: epochMs,
  pausedUntilMs: epochMs,
});
const learnerSchema = z.object({
  anchorUsed: z.number().min(0).max(100).nullable(),
  anchorResetMs: epochMs.nullable(),
  pendingTokens: count,
  n: z.number().min(0).max(1e6),
  sumRise: z.number(),
  sumTokens: z.number(),
  sumRise2: z.number(),
  sumRiseTokens: z.number(),
  sumTokens2: z.number(),
});
const learnersSchema = z.record(z.string().max(80), learnerSchema).refine((r) => Object.keys(r).length <= 40);
const bindingSchema = z.object({ account: labelSchema, lastServedAtMs: epochMs });

/** Whether `ms` is an observation time: within the last 30 days, at most 5 min ahead of `now`. */
function observed(ms: number, now: number): boolean {
  return ms >= now - PAST_MS && ms <= now + SKEW_MS;
}

/** Whether `ms` is a reset time: 0 (unknown) or at most 8 days ahead of `now`. */
function resetTime(ms: number | undefined, now: number): boolean {
  return ms === undefined || ms <= now + WINDOW_EXHAUSTED_CEILING_MS + SKEW_MS;
}

/** Quota evidence, or undefined. */
export function evidenceOf(v: unknown, now: number): QuotaSnapshot | undefined {
  const r = snapshotSchema.safeParse(v);
  if (!r.success) return undefined;
  const s = r.data;
  const windows = [s.session, s.weekly, s.overage, ...Object.values(s.scoped)];
  if (!observed(s.observedAtMs, now) || !resetTime(s.unifiedResetAtMs, now)) return undefined;
  if (s.unifiedObservedAtMs !== undefined && s.unifiedObservedAtMs > s.observedAtMs) return undefined;
  for (const w of windows) if (w && (!resetTime(w.resetAtMs, now) || (w.observedAtMs !== undefined && w.observedAtMs > s.observedAtMs))) return undefined;
  return s;
}

/** A cooldown that ends no later than its reason allows from `now`, or undefined (`local` ones are never shared). */
export function cooldownOf(v: unknown, now: number): Cooldown | undefined {
  const r = cooldownSchema.safeParse(v);
  if (!r.success) return undefined;
  const c = r.data;
  if (c.setAtMs > now + SKEW_MS || c.untilMs > now + COOLDOWN_CEILING_MS[c.reason] + SKEW_MS) return undefined;
  return c;
}

/** A session binding, or undefined. */
export function bindingOf(v: unknown, now: number): { account: string; lastServedAtMs: number } | undefined {
  const r = bindingSchema.safeParse(v);
  return r.success && observed(r.data.lastServedAtMs, now) ? r.data : undefined;
}

/** A router's in-flight record: account → [requests, tokens reserved or null], or undefined. */
export function inflightOf(v: unknown): Record<string, [number, CostEstimate | null]> | undefined {
  const r = inflightSchema.safeParse(v);
  return r.success ? r.data : undefined;
}

/** A learned concurrency limit (null: forgotten), or undefined when it is none. */
export function limitOf(v: unknown, now: number): LearnedLimit | null | undefined {
  if (v === null) return null;
  const r = limitSchema.safeParse(v);
  if (!r.success || r.data.lastThrottleAtMs > now + SKEW_MS || r.data.pausedUntilMs > now + PAUSE_CEILING_MS) return undefined;
  return r.data;
}

/** An account's learners (window → state), or undefined. */
export function learnersOf(v: unknown, now: number): SavedLearnedCosts[string] | undefined {
  const r = learnersSchema.safeParse(v);
  if (!r.success) return undefined;
  for (const w of Object.values(r.data)) if (w.anchorResetMs !== null && !resetTime(w.anchorResetMs, now)) return undefined;
  return r.data;
}

/** Tokens served, or undefined. */
export function tokensOf(v: unknown): TokensByKind | undefined {
  const r = costSchema.safeParse(v);
  return r.success ? r.data : undefined;
}

/** Whether `ms` is a cooldown end another router may name when it lifts one (finite epoch ms). */
export function isEpochMs(v: unknown): v is number {
  return typeof v === 'number' && v >= 0 && v <= 8.64e15;
}

/** Whether `v` names a session binding's key (a sticky-key hash). */
export function isSessionHash(v: unknown): v is string {
  return typeof v === 'string' && /^[0-9a-f]{1,64}$/.test(v);
}

/** The sum of two token counts (a reservation and another). */
export function addCost(sum: Readonly<CostEstimate> | undefined, c: Readonly<CostEstimate>): CostEstimate {
  return {
    inputTokens: (sum?.inputTokens ?? 0) + c.inputTokens,
    cacheReadTokens: (sum?.cacheReadTokens ?? 0) + c.cacheReadTokens,
    cacheWriteTokens: (sum?.cacheWriteTokens ?? 0) + c.cacheWriteTokens,
    outputTokens: (sum?.outputTokens ?? 0) + c.outputTokens,
  };
}

/** Whether two views of the others' load are the same (so an unchanged gather signals no change). */
export function sameLoad(a: Map<string, RemoteLoad>, b: Map<string, RemoteLoad>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) {
    const w = b.get(k);
    if (!w || w.inflight !== v.inflight || JSON.stringify(w.reserved) !== JSON.stringify(v.reserved)) return false;
  }
  return true;
}
