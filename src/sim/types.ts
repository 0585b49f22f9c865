/**
 * Public types of the fake Anthropic upstream.
 *
 * Units: times are epoch MILLISECONDS unless a name ends in `S` (seconds); utilisation is a
 * FRACTION 0–1 (may exceed 1) everywhere in this API. Only the wire formats differ: the
 * unified headers carry fractions and epoch seconds, `/api/oauth/usage` carries percent and ISO.
 */

/** One fake account. The bearer token (or x-api-key) on a request selects it. */
export interface SimAccountSpec {
  /** Unique name; used in faults, state and issued token strings. */
  label: string;
  /** `Authorization: Bearer <accessToken>` selects the account (or `x-api-key` when `apiKey`). */
  accessToken: string;
  /** Enables the OAuth refresh grant for this account. */
  refreshToken?: string;
  /** Lifetime of issued access tokens, ms (default 8 h); the token endpoint returns it as `expires_in` seconds. */
  accessTokenTtlMs?: number;
  /** Pay-as-you-go key: authenticates with `x-api-key`; no unified headers, no OAuth beta, no windows enforced. */
  apiKey?: boolean;
  /** Size of the 5-hour window in tokens (default 2_000_000). */
  fiveHourLimitTokens?: number;
  /** Size of the 7-day window in tokens (default 20_000_000). */
  sevenDayLimitTokens?: number;
  /** Initial 5h utilisation, FRACTION 0..1 (default 0). */
  initialFiveHourUsed?: number;
  /** Initial 7d utilisation, FRACTION 0..1 (default 0). */
  initialSevenDayUsed?: number;
  /**
   * Initial ms until the 5h reset. Default: the window starts on the first request and resets
   * 5 h later (or, when `initialFiveHourUsed > 0`, it is taken to have started at server start).
   */
  fiveHourResetInMs?: number;
  /** Likewise for the 7d window, ms. */
  sevenDayResetInMs?: number;
  /**
   * Model-scoped weekly windows keyed by model family (`sonnet`, `opus`, …): size in tokens,
   * initial utilisation FRACTION, initial ms until reset.
   */
  scopedWindows?: Record<string, { limitTokens: number; initialUsed?: number; resetInMs?: number }>;
  /** Default true; false makes `/api/oauth/usage` answer 403 (like a long-lived setup-token). */
  usageEndpoint?: boolean;
}

/**
 * A fault injected on one account. One-shot faults are queued and consumed FIFO, one per
 * `/v1/messages` request of that account; `exhaust`, `throttle_window` and `expire_token` are
 * persistent states applied at injection time.
 */
export type SimFault =
  /**
   * Persistent: the window (`5h`, `7d`, `7d_<family>`; `five_hour`/`seven_day`/`seven_day_<family>`
   * accepted too) is set to utilisation >= 1 (rejected) until `resetInMs` (ms from now) passes.
   * `perWindowOnly` drops the unified `status`/`reset`/`representative-claim` headers from its 429s.
   */
  | { kind: 'exhaust'; window: string; resetInMs: number; perWindowOnly?: boolean }
  /**
   * One-shot: the request is served (200) and the window is then exhausted as by `exhaust`, so this
   * answer's own unified headers already show the window rejected (the switch a plain answer reveals);
   * the account's next requests meet the rejection.
   */
  | { kind: 'exhaust_after_answer'; window: string; resetInMs: number }
  /** One-shot 429 rate_limit_error with `retry-after: retryAfterS` (SECONDS); unified statuses all `allowed`. */
  | { kind: 'throttle'; retryAfterS: number }
  /**
   * Persistent for `durationMs` (ms from injection, by the sim's clock): every Messages request of the account is
   * answered like `throttle`, with `retry-after: retryAfterS` (SECONDS; default the window's remaining time, rounded up).
   */
  | { kind: 'throttle_window'; durationMs: number; retryAfterS?: number }
  /** One-shot 429 with body message `Error`, no `anthropic-ratelimit-*`, no `retry-after`. */
  | { kind: 'headerless_429' }
  /** One-shot 429 "Extra usage is required for long context requests." */
  | { kind: 'entitlement_429' }
  /** One-shot 529 overloaded_error. */
  | { kind: 'overloaded_529' }
  /** One-shot 200 SSE whose first event is `event: error` overloaded_error; JSON requests get 529. */
  | { kind: 'overloaded_in_stream' }
  /** One-shot 200 SSE: message_start, content_block_start, 2 deltas, `event: error` api_error, end. JSON requests get 500. */
  | { kind: 'error_after_content' }
  /**
   * One-shot 200 SSE: message_start + deltas, then the socket ends before message_stop (an
   * unterminated chunked body). `clean: true` ends the HTTP response properly instead.
   */
  | { kind: 'truncate'; clean?: boolean }
  /** Persistent: the current access token answers 401 "OAuth token has expired…" until refreshed. */
  | { kind: 'expire_token' }
  /** One-shot: wait `delayMs` (ms, real time) before the response headers, then answer normally. */
  | { kind: 'slow_first_byte'; delayMs: number }
  /** One-shot 5xx with an api_error body. */
  | { kind: 'server_error'; status: 500 | 502 | 503 | 504 }
  /** One-shot error page from something in front of the API (a load balancer): `status`, `text/html`, about `bytes` long. */
  | { kind: 'html_error'; status: number; bytes: number }
  /** One-shot 403 permission_error "OAuth token has been revoked." */
  | { kind: 'forbidden' }
  /** One-shot 400 invalid_request_error. */
  | { kind: 'bad_request' }
  /**
   * One-shot answer whose body quotes the request's headers, bearer token included, as a
   * misbehaving gateway might: a JSON message whose text is the headers (`status` 200), or an
   * error whose message is (400 `invalid_request_error`, 401 `authentication_error`, 500 `api_error`).
   */
  | { kind: 'echo_headers'; status: 200 | 400 | 401 | 500 };

/** Options of {@link startFakeUpstream}. */
export interface FakeUpstreamOptions {
  accounts: SimAccountSpec[];
  /** Listen address (default 127.0.0.1). */
  host?: string;
  /** Listen port (default 0: a free port). */
  port?: number;
  /** Injectable clock, epoch ms (default Date.now). Windows, resets, cache TTL and token expiry use it. */
  now?: () => number;
  /** Prompt-cache entry lifetime after its last use, ms (default 300_000). */
  promptCacheTtlMs?: number;
  /** Number of content_block_delta events per streamed answer (default 3). */
  sseDeltaCount?: number;
  /** Real-time delay between SSE events, ms (default 0: one burst of separate writes). */
  sseIntervalMs?: number;
  /** Reply text per account label (default `Hello from ${label}.`). */
  replyText?: (label: string) => string;
  /** Reject access tokens older than their TTL (by the injected clock). Default false: TTL is only reported. */
  enforceTokenExpiry?: boolean;
  /** Require the `anthropic-version` header on /v1/messages* like the real API (default true). */
  requireVersionHeader?: boolean;
  /** Bound `requests` to about this many entries (oldest dropped in batches of ~10%); default unbounded. Soak tests set it. */
  maxRecords?: number;
  /** Real-time delay before the token endpoint answers, ms (default 0): a refresh takes as long as a real one, so routers refreshing at once overlap. */
  tokenLatencyMs?: number;
}

/** Token usage of one answer, with Anthropic's field names. */
export interface SimUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

/** One received request (control requests under `/_sim/` are not recorded). */
export interface SimRequestRecord {
  /** When it arrived, epoch ms by the injected clock. */
  at: number;
  method: string;
  /** Path with query string. */
  path: string;
  /** Label of the account the credentials resolved to (also for expired/superseded tokens), else null. */
  account: string | null;
  /** Response status; 0 while not yet answered (or if the client went away first). */
  status: number;
  /** Request headers, lower-cased names, credentials as received. */
  headers: Record<string, string>;
  bodyBytes: number;
  /** Hex SHA-256 of the raw request body. */
  bodySha256: string;
  /** Session id from `x-claude-code-session-id` or `metadata.user_id`, else null. */
  sessionId: string | null;
  /**
   * Fault kind that shaped the answer: a consumed one-shot kind, `exhaust` (429 from a window
   * exhausted by a fault), `window_full` (429 from a window filled by traffic), `expire_token`.
   */
  fault?: string;
  /** `model` of the request body, when it had one. */
  model?: string;
  /** Usage reported in a 200 answer of /v1/messages. */
  usage?: SimUsage;
  /** /v1/messages: the account's Messages requests in flight when it arrived, itself included. */
  inflight?: number;
  /** Its place in the order the recorded requests arrived, from 1. */
  seq?: number;
  /** How many recorded requests had arrived when its response head was sent (the `seq` of the last of them). */
  answeredAfter?: number;
}

/** A model-scoped window as seen through {@link FakeUpstream.account}. */
export interface SimScopedWindowState {
  /** Utilisation FRACTION. */
  used: number;
  /** Reset time, epoch ms; 0 while the window has not started. */
  resetAtMs: number;
}

/** Snapshot of one account (after expiring any window whose reset has passed). */
export interface SimAccountState {
  label: string;
  /** Current access token (changes on refresh/login). */
  accessToken: string;
  /** Current refresh token, if any. */
  refreshToken?: string;
  /** 5h utilisation FRACTION (may exceed 1). */
  fiveHourUsed: number;
  /** 7d utilisation FRACTION (may exceed 1). */
  sevenDayUsed: number;
  /** 5h reset, epoch ms; 0 while the window has not started (no request since the last reset). */
  fiveHourResetAtMs: number;
  /** 7d reset, epoch ms; 0 while the window has not started. */
  sevenDayResetAtMs: number;
  /** Model-scoped windows keyed by family. */
  scoped: Record<string, SimScopedWindowState>;
  /** Successful (complete 200) /v1/messages answers. */
  served: number;
  /** Sum of cache_read_input_tokens over served answers. */
  cacheReadTokens: number;
  /** Sum of cache_creation_input_tokens over served answers. */
  cacheCreationTokens: number;
  /** Successful refresh grants. */
  refreshCount: number;
  /** Refresh grants refused because the refresh token was already spent (another holder rotated it first): `invalid_grant` caused by rotation. */
  spentRefreshes: number;
  /** Queued one-shot fault kinds, FIFO. */
  pendingFaults: string[];
  /** Messages requests being answered now. */
  inflight: number;
  /** The most Messages requests ever in flight at once. */
  maxInflight: number;
  /** Requests above this many in flight at once are throttled (see {@link FakeUpstream.setConcurrencyLimit}); null: none. */
  concurrencyLimit: number | null;
}

/** A running fake upstream. */
export interface FakeUpstream {
  /** Base URL, e.g. `http://127.0.0.1:PORT`. */
  url: string;
  /** `${url}/v1/oauth/token`. */
  tokenUrl: string;
  /** Every request received, in arrival order (control requests excluded; see `maxRecords`). */
  requests: SimRequestRecord[];
  /** Queue a fault; `count` (default 1) is ignored for the persistent `exhaust` / `throttle_window` / `expire_token`. Throws on an unknown label or invalid fault. */
  injectFault(label: string, fault: SimFault, count?: number): void;
  /**
   * Script (or with null lift) a concurrency limit: a Messages request that arrives while more than
   * `limit` are in flight on the account (itself included) gets a 429 `rate_limit_error` whose
   * unified headers all say `allowed`, with no `retry-after`. Throws on an unknown label or a limit
   * that is not a positive integer.
   */
  setConcurrencyLimit(label: string, limit: number | null): void;
  /** Drop queued faults and lift fault-made states (exhaust, throttle_window, expire_token) of one account, or of all. */
  clearFaults(label?: string): void;
  /** Snapshot of one account; throws on an unknown label. */
  account(label: string): SimAccountState;
  /** Successful refresh grants of one account. */
  refreshCount(label: string): number;
  /** Move the sim's clock forward by `ms` (added to the injected clock). */
  advanceClock(ms: number): void;
  /** Current sim time, epoch ms (injected clock + advanceClock offset). */
  now(): number;
  /** Close the server and every open socket; pending delays are cancelled. */
  close(): Promise<void>;
}
