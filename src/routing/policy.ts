/**
 * The routing policy snapshot: one immutable object per configuration
 * generation. Each request reads one snapshot for its whole life, so a reload
 * never changes the rules under a request that is already running.
 */
import type { AccountRanking } from './ranking';
import { DEFAULT_COST_LEASE_MARGIN } from './costEstimate';

/** When a bound session's binding moves to the account that served it (docs/routing.md#bindings-and-blips). */
export type RebindMode = 'on-serve' | 'on-quota';

/** How requests are spread over accounts: a name from the strategy catalogue (src/routing/planner/strategies/registry.ts). */
export type RoutingStrategy = string;

/** Effective routing values (all units explicit). */
export interface RoutingPolicy {
  strategy: RoutingStrategy;
  accountRanking: AccountRanking;
  /** Put the configured primary first when it is usable and not session-saturated. */
  preferPrimary: boolean;
  /** Label of the configured primary account, if any. */
  primaryAccount: string | undefined;
  sessionAffinity: boolean;
  /** A request without a session id is keyed by a fingerprint of its stable head (src/routing/identify.ts). */
  sessionFingerprint: boolean;
  /** Idle time after which a binding is dropped, ms (60 000–86 400 000). */
  sessionAffinityIdleTtlMs: number;
  /**
   * When a bound session is served by another account, whether its binding follows (docs/routing.md#bindings-and-blips):
   * `on-serve` — after any failure of its account but a blip; `on-quota` — only after quota, sign-in, removal or disabling.
   */
  sessionAffinityRebind: RebindMode;
  /**
   * A bound account's transient cooldown ending within this many ms is waited for (the session stays on it); also the
   * longest `retry-after` a same-account retry waits for. ms, 0 = never wait.
   */
  sessionAffinityBlipWaitMs: number;
  /**
   * Hold a request while no account can serve it, when the soonest recovery is a transient cooldown ending within this
   * many ms (docs/routing.md#transient-wait). ms, 0 = off, at most 120 000.
   */
  transientWaitMaxMs: number;
  /**
   * When no account can serve and the pool's earliest recovery is at most this far away, the
   * router's own answer keeps the client retrying (throttle-shaped, `retry-after` at most 60 s)
   * instead of claiming a usage window or naming a wait past Claude Code's 60 s retry bound
   * (docs/claude-code-client.md#the-client-retry-horizon). ms, 0 = off, at most 3 600 000.
   */
  clientRetryHorizonMs: number;
  /** Spill threshold in in-flight requests; 0 = off. */
  spillInflight: number;
  /** Per-account cap on in-flight requests; 0 = no cap. */
  maxInflightPerAccount: number;
  /** Session soft limit as a fraction of the 5h window (1 disables it). */
  sessionSoftLimit: number;
  /** Width of the session-reset bucket, ms. */
  sessionResetToleranceMs: number;
  /** Whether an account may keep serving into paid overage when the provider offers it. */
  allowOverage: boolean;
  /**
   * Memory budget for the request bodies the proxy holds at once, bytes (≥ 32 MB): past it a new
   * request is answered 503 `overloaded_error` before its body is read.
   */
  maxBufferedBodyBytes: number;
  /**
   * Requests held at once instead of answered (transient wait, concurrency queue, admission ramp),
   * across every account; their bodies may take half of `maxBufferedBodyBytes`. 0 = never hold.
   */
  maxWaitingRequests: number;
  /**
   * The longest a request waits for room on an account (its `maxInflightPerAccount`, its learned
   * concurrency limit, its admission ramp) before it is answered 429 with `retry-after`, ms
   * (0–600 000; 0 = never wait).
   */
  queueWaitMaxMs: number;
  /** Admit requests to an account many move to at once (after a cooldown, or when another became unusable) one, then two, four… as answers succeed. */
  admissionRamp: boolean;
  /** Quota-based ranking on (false when `CLAUDE_ROUTER_QUOTA_ROUTING=off`). */
  quotaRouting: boolean;
  /** relative-availability: how many of the most available accounts the draw picks from (≥ 1). */
  relativeAvailabilityTopK: number;
  /** relative-availability: draw weight = availability ^ this power (≥ 0; 0 = uniform). */
  relativeAvailabilityPower: number;
  /** single-account: the pinned account's label; the primary (else the first account) when undefined. */
  singleAccountLabel: string | undefined;
  /** weighted: the preset the weights start from (`sticky-headroom`, `headroom`, `least-loaded`, `priority`, `cost-tiered`). */
  weightedPreset: string;
  /** weighted: weights (fractions 0–1) that override the preset's, by term. */
  weights: Readonly<Partial<Record<'affinity' | 'headroom' | 'priority' | 'load' | 'errors' | 'cost', number>>>;
  /**
   * Sticky reallocation: a bound session leaves its account when the account's 5h window is more
   * than this percent used (0–100, with in-flight pressure) and another eligible account is below
   * both thresholds. undefined = off. Percent, unlike `sessionSoftLimit` (a fraction).
   */
  stickyThreshold5h: number | undefined;
  /** The same for the weekly (7d) window, percent used (0–100); undefined = off. */
  stickyThreshold7d: number | undefined;
  /** In-flight pressure the sticky thresholds add per request in flight on an account, percentage points (0–100). */
  inflightPenaltyPct: number;
  /** Restrict the first choice to the eligible accounts whose weekly window resets soonest (whole days). */
  preferEarlierReset: boolean;
  /** Cost leases: the factor every estimate of a request in flight is multiplied by (1–3; docs/cost-leases.md). */
  costLeaseMargin: number;
  /** The model a limit warm-up asks (`routing.warm-up-model`; docs/routing.md#limit-warm-up). */
  warmUpModel: string;
  /**
   * Warn (one alert, a line in `status`) when an OAuth account's sign-in is this old: the refresh
   * chain reportedly ends some 28–29 days after it (src/accounts/grant.ts). Days, 0 = off, at most 365.
   */
  grantWarnDays: number;
}

/** The defaults: exactly expiry-first fill-first with every modifier off (the fingerprint only names a key; it routes nothing without affinity). */
export const DEFAULT_POLICY: Readonly<RoutingPolicy> = Object.freeze({
  strategy: 'fill-first',
  accountRanking: 'expiry-first',
  preferPrimary: false,
  primaryAccount: undefined,
  sessionAffinity: false,
  sessionFingerprint: true,
  sessionAffinityIdleTtlMs: 3_600_000,
  sessionAffinityRebind: 'on-serve',
  sessionAffinityBlipWaitMs: 2_000,
  transientWaitMaxMs: 90_000,
  clientRetryHorizonMs: 600_000,
  spillInflight: 0,
  maxInflightPerAccount: 0,
  sessionSoftLimit: 0.97,
  sessionResetToleranceMs: 900_000,
  allowOverage: false,
  maxBufferedBodyBytes: 256 * 1024 * 1024,
  maxWaitingRequests: 256,
  queueWaitMaxMs: 120_000,
  admissionRamp: true,
  quotaRouting: true,
  relativeAvailabilityTopK: 2,
  relativeAvailabilityPower: 2,
  singleAccountLabel: undefined,
  weightedPreset: 'sticky-headroom',
  weights: Object.freeze({}),
  stickyThreshold5h: undefined,
  stickyThreshold7d: undefined,
  inflightPenaltyPct: 2.5,
  preferEarlierReset: false,
  costLeaseMargin: DEFAULT_COST_LEASE_MARGIN,
  grantWarnDays: 21,
  warmUpModel: 'claude-haiku-4-5',
});
