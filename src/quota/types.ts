/**
 * Quota evidence as the router stores it, independent of where it came from.
 *
 * Units are normalised at the parsing boundary so nothing downstream guesses:
 * utilisation is always a FRACTION (0–1, may exceed 1), times are always epoch
 * MILLISECONDS. Headers report fractions and epoch seconds; the usage endpoint
 * reports percent and ISO-8601 (see docs/anthropic-api.md#units).
 */

/** One rate-limit window (5h session, 7d weekly, or a model-scoped weekly window). */
export interface QuotaWindow {
  /** Raw status string: `allowed`, `allowed_warning`, `rejected`, `throttled`, or anything else seen. */
  status?: string;
  /** Fraction of the window used, 0–1 (can exceed 1). */
  utilization?: number;
  /** When the window resets, epoch ms. Absent or 0 means unknown. */
  resetAtMs?: number;
  /**
   * When this window was observed, epoch ms, when that is earlier than its snapshot's
   * `observedAtMs`. Set by `mergeSnapshot` (src/quota/merge.ts) on a window carried over from an
   * older snapshot, so a carried window still ages out 15 min after its own observation instead
   * of being refreshed by every merge. Absent: the snapshot's `observedAtMs`.
   */
  observedAtMs?: number;
}

/** A model-scoped window with the time it was observed (scoped windows are merged across snapshots). */
export interface ScopedQuotaWindow extends QuotaWindow {
  /** When this window was last observed, epoch ms. */
  observedAtMs: number;
}

/** Paid extra usage ("overage") as the provider reports it. */
export interface OverageInfo {
  status?: string;
  inUse?: boolean;
  resetAtMs?: number;
  utilization?: number;
  disabledReason?: string;
  /** As `QuotaWindow.observedAtMs`: set only when carried over from an older snapshot by `mergeSnapshot`. */
  observedAtMs?: number;
}

/** Where a snapshot came from; decides the units its parser used. */
export type QuotaSource = 'headers' | 'usage';

/** Everything known about one account's quota at one moment. */
export interface QuotaSnapshot {
  /** When this evidence was observed, epoch ms. */
  observedAtMs: number;
  source: QuotaSource;
  /** `anthropic-ratelimit-unified-status`. */
  unifiedStatus?: string;
  /** `anthropic-ratelimit-unified-reset`, epoch ms. */
  unifiedResetAtMs?: number;
  /** `anthropic-ratelimit-unified-representative-claim`, e.g. `five_hour`, `seven_day`. */
  representativeClaim?: string;
  /**
   * When `unifiedStatus` / `unifiedResetAtMs` / `representativeClaim` were observed, epoch ms,
   * when earlier than `observedAtMs` — set by `mergeSnapshot` when it carries them over from an
   * older snapshot (e.g. into a usage-endpoint snapshot, which never reports them). Absent:
   * `observedAtMs`.
   */
  unifiedObservedAtMs?: number;
  /** The 5h session window. */
  session?: QuotaWindow;
  /** The 7d weekly window. */
  weekly?: QuotaWindow;
  /**
   * Model-scoped weekly windows keyed by model family in lower case
   * (`sonnet`, `opus`, `oi`, …) — from `7d_sonnet-*` headers or `seven_day_sonnet` usage fields.
   */
  scoped: Record<string, ScopedQuotaWindow>;
  overage?: OverageInfo;
}

/**
 * What an upstream response means for routing. Produced by `classifyResponse`
 * (src/quota/classify.ts) from the status, headers and (for errors) the small
 * error body; consumed by the attempt loop. The kinds follow
 * docs/anthropic-api.md#kinds-of-429.
 */
export type ResponseClass =
  /** 2xx: serve it. */
  | { kind: 'success' }
  /** A rejected 5h/7d/unified window whose reset is still ahead: account cooled until `untilMs`, rotate. */
  | { kind: 'window_exhausted'; untilMs: number; windows: string[] }
  /**
   * Only a model-scoped window rejected: skip this account for that model family, no account
   * cooldown. `window`: the window's key when it names no model family (`oi` of `7d_oi`) — `family`
   * is then the refused request's model family.
   */
  | { kind: 'model_scoped_exhausted'; family: string; window?: string; untilMs?: number }
  /** 429 with `retry-after` and no rejected window: short cooldown of `retryAfterMs`, rotate. */
  | { kind: 'throttle'; retryAfterMs: number }
  /** 429 with neither rate-limit headers nor `retry-after`: not a capacity signal, no cooldown. */
  | { kind: 'request_scoped' }
  /**
   * 429 whose rate-limit headers say the account is allowed, with no `retry-after`: too many
   * requests at once on the account (a concurrency or rate throttle), not a reason to bench it.
   */
  | { kind: 'concurrency_throttle' }
  /** "Extra usage is required …": this account cannot serve this request shape; rotate, no cooldown. */
  | { kind: 'entitlement' }
  /** 529 or `overloaded_error`: Anthropic-wide; short pause, rotate. */
  | { kind: 'overloaded'; retryAfterMs?: number }
  /** 401: one token refresh, then a retry. */
  | { kind: 'unauthorized' }
  /** 403 (revoked, organisation not allowed): needs attention, rotate. */
  | { kind: 'forbidden' }
  /** 400 and other deterministic 4xx: return to the client, never rotate. */
  | { kind: 'client_error' }
  /** 500/502/503/504 and other 5xx: transient; limited retries on other accounts. */
  | { kind: 'server_error'; retryAfterMs?: number };

/** Why an account is cooling down. */
export type CooldownReason = 'window_exhausted' | 'throttle' | 'overloaded' | 'forbidden' | 'server_error' | 'needs_sign_in';

/** An account-wide cooldown. */
export interface Cooldown {
  /** Until when the account is not tried, epoch ms. */
  untilMs: number;
  reason: CooldownReason;
  /** The windows behind a `window_exhausted` cooldown, e.g. `['5h']`, `['7d']`. */
  windows?: string[];
  /** When the cooldown was set, epoch ms. */
  setAtMs: number;
  /**
   * This router's own pause, not the account's state: its token refresh waits for the shared store,
   * or its token endpoint could not be reached. Never shared with the pool (docs/shared-pool.md);
   * lifted when a new pair of the account arrives.
   */
  local?: true;
}
