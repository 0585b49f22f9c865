/**
 * One zod schema for `proxy-config.yaml` and (later) the VS Code settings.
 * Keys are camelCase here; `normalizeKeys` maps kebab-case input onto them and
 * `formatIssues` names the key the way the user wrote it.
 */
import { z } from 'zod';
import { storeUrlProblem } from './storeUrl';
import { DEFAULT_POLICY } from '../routing/policy';
import { STRATEGY_NAMES } from '../routing/planner/strategies/registry';
import { WEIGHTED_PRESETS } from '../routing/planner/strategies/weighted';

/** Default loopback port of the proxy (stable so terminals keep working across restarts). */
export const DEFAULT_PORT = 48290;

/** The largest request body the proxy takes (Anthropic's limit, docs/anthropic-api.md#forwarding), bytes. */
const MAX_REQUEST_BODY_BYTES = 32 * 1024 * 1024;
/** The largest `max-buffered-body-bytes` accepted (64 GiB), bytes. */
const MAX_BUFFERED_BODY_BYTES_LIMIT = 64 * 1024 * 1024 * 1024;

const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '::1'] as const;

const epochOrIso = z.union([z.number().int().nonnegative(), z.string()]).transform((v, ctx) => {
  const ms = typeof v === 'number' ? v : /^\d+$/.test(v.trim()) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(ms)) {
    ctx.addIssue({ code: 'custom', message: 'must be an ISO-8601 date or epoch milliseconds' });
    return z.NEVER;
  }
  return ms;
});

/** A `weights.*` value: a fraction. */
const weight = z.number().min(0, 'must be a fraction from 0 to 1').max(1, 'must be a fraction from 0 to 1').optional();

/** A sticky reallocation threshold: percent used, 0–100. */
const percentUsed = z
  .number()
  .min(0, 'must be a percentage from 0 to 100 (percent used, not a fraction)')
  .max(100, 'must be a percentage from 0 to 100 (percent used, not a fraction)')
  .optional();

/** The `routing:` block. Every key optional; defaults come from DEFAULT_POLICY. */
export const routingSchema = z.strictObject({
  strategy: z.enum(STRATEGY_NAMES).optional(),
  accountRanking: z.enum(['expiry-first', 'headroom-first']).optional(),
  preferPrimary: z.boolean().optional(),
  primaryAccount: z.string().min(1).optional(),
  sessionAffinity: z.boolean().optional(),
  sessionFingerprint: z.boolean().optional(),
  sessionAffinityIdleTtlMs: z.number().int().min(60_000).max(86_400_000).optional(),
  sessionAffinityRebind: z.enum(['on-serve', 'on-quota']).optional(),
  sessionAffinityBlipWaitMs: z.number().int().min(0, 'must be from 0 to 30000 ms (0 never waits)').max(30_000, 'must be from 0 to 30000 ms (0 never waits)').optional(),
  transientWaitMaxMs: z
    .number()
    .int()
    .min(0, 'must be from 0 (off) to 120000 ms')
    .max(120_000, 'must be from 0 (off) to 120000 ms: the whole wait of a request is bounded by 120 s')
    .optional(),
  clientRetryHorizonMs: z.number().int().min(0, 'must be from 0 (off) to 3600000 ms').max(3_600_000, 'must be from 0 (off) to 3600000 ms (1 hour)').optional(),
  spillInflight: z.number().int().min(0).max(100).optional(),
  maxInflightPerAccount: z.number().int().min(0).max(10_000).optional(),
  sessionSoftLimit: z.number().gt(0).max(1).optional(),
  sessionResetToleranceMs: z.number().int().min(1).max(86_400_000).optional(),
  allowOverage: z.boolean().optional(),
  maxBufferedBodyBytes: z
    .number()
    .int()
    .min(MAX_REQUEST_BODY_BYTES, `must be at least ${MAX_REQUEST_BODY_BYTES} (32 MB, the largest request body)`)
    .max(MAX_BUFFERED_BODY_BYTES_LIMIT)
    .optional(),
  maxWaitingRequests: z.number().int().min(0, 'must be 0 (never hold a request) or more').max(10_000).optional(),
  queueWaitMaxMs: z.number().int().min(0, 'must be 0 (never wait) or more milliseconds').max(600_000, 'must be at most 600000 (10 minutes)').optional(),
  admissionRamp: z.boolean().optional(),
  relativeAvailabilityTopK: z.number().int().min(1).max(100).optional(),
  relativeAvailabilityPower: z.number().min(0).max(10).optional(),
  singleAccountLabel: z.string().min(1).optional(),
  weightedPreset: z.enum(Object.keys(WEIGHTED_PRESETS) as [keyof typeof WEIGHTED_PRESETS]).optional(),
  /** weighted: per-term weights, fractions 0–1, overriding the preset's. */
  weights: z
    .strictObject({
      affinity: weight,
      headroom: weight,
      priority: weight,
      load: weight,
      errors: weight,
      cost: weight,
    })
    .optional(),
  /** Sticky reallocation thresholds, percent used (0–100); absent = off. */
  stickyThreshold5h: percentUsed,
  stickyThreshold7d: percentUsed,
  /** Percentage points of pressure per in-flight request (sticky thresholds). */
  inflightPenaltyPct: z
    .number()
    .min(0, 'must be from 0 to 100 percentage points per in-flight request')
    .max(100, 'must be from 0 to 100 percentage points per in-flight request')
    .optional(),
  preferEarlierReset: z.boolean().optional(),
  /** Cost leases: the factor on every estimate of a request in flight (docs/cost-leases.md). */
  costLeaseMargin: z.number().min(1, 'must be from 1 (no margin) to 3').max(3, 'must be from 1 (no margin) to 3').optional(),
  /** The model a limit warm-up asks (docs/routing.md#limit-warm-up). */
  warmUpModel: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.:@_-]{0,99}$/, 'must be a model id such as claude-haiku-4-5 (lower-case letters, digits, ".", "-", "_", ":", "@")')
    .optional(),
  /** Days after an OAuth sign-in to warn that it should be renewed (0: off; src/accounts/grant.ts). */
  grantWarnDays: z.number().int().min(0, 'must be from 0 (off) to 365 days').max(365, 'must be from 0 (off) to 365 days').optional(),
});
export type RoutingInput = z.infer<typeof routingSchema>;

/** Names that would collide with object internals wherever a label becomes a key. */
export const RESERVED_LABELS = new Set(['__proto__', 'constructor', 'prototype']);

const labelSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[^\u0000-\u001f\u007f]+$/, 'must not contain control characters')
  .refine((l) => l.trim().length > 0, 'must not be blank')
  .refine((l) => !RESERVED_LABELS.has(l), 'is a reserved name');

/** One `accounts:` entry. Tokens here only seed the credential store. */
export const accountSchema = z
  .strictObject({
    label: labelSchema,
    accessToken: z.string().min(1).optional(),
    refreshToken: z.string().min(1).optional(),
    expiresAt: epochOrIso.optional(),
    apiKey: z.string().min(1).optional(),
    fallback: z.boolean().optional(),
    enabled: z.boolean().optional(),
    /** weighted: higher first (integer, default 0). */
    priority: z.number().int().min(-1000).max(1000).optional(),
    /** weighted: 1 = cheapest (default 1). */
    costTier: z.number().min(0).max(1000).optional(),
    /** capacity-weighted: the allowance relative to the other accounts' (Pro 1, Max 5x 5, Max 20x 20). */
    planSize: z.number().gt(0, 'must be a positive number: the allowance relative to the other accounts (e.g. Pro 1, Max 5x 5, Max 20x 20)').max(1000).optional(),
    /** Limit warm-up: one small real request (it spends a little quota) when a window of this account has newly reset. */
    warmUp: z.boolean().optional(),
  })
  .refine((a) => !(a.apiKey && a.accessToken), { message: 'give either access-token or api-key, not both' });

export const configSchema = z.strictObject({
  listen: z
    .strictObject({
      host: z.enum(LOOPBACK_HOSTS, { message: `must be a loopback address (${LOOPBACK_HOSTS.join(', ')})` }).optional(),
      port: z.number().int().min(0).max(65535).optional(),
    })
    .optional(),
  upstream: z
    .strictObject({
      baseUrl: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional(),
      tokenUrl: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional(),
    })
    .optional(),
  clientKey: z
    .string()
    .min(16, 'must be at least 16 characters')
    .refine((k) => k === k.trim() && !/\s/.test(k), 'must not contain spaces')
    .optional(),
  stateDir: z.string().min(1).optional(),
  /** A Redis URL (`redis://`, `rediss://` for TLS) that several routers share their pool through (docs/shared-pool.md); absent: this machine's files only. */
  stateStore: z
    .string()
    .superRefine((url, ctx) => {
      const problem = storeUrlProblem(url);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
  /** A file whose first line is the store's password (instead of one in the URL). */
  stateStorePasswordFile: z.string().min(1).optional(),
  /** The file holding the key tokens are sealed with in the store (default `<state-dir>/store.key`, created at first use). */
  stateStoreKeyFile: z.string().min(1).optional(),
  accounts: z
    .array(accountSchema)
    .optional()
    .superRefine((accounts, ctx) => {
      const seen = new Set<string>();
      accounts?.forEach((a, i) => {
        if (seen.has(a.label)) ctx.addIssue({ code: 'custom', path: [i, 'label'], message: `duplicate label "${a.label}"` });
        seen.add(a.label);
      });
    }),
  routing: routingSchema.optional(),
});
export type ConfigInput = z.infer<typeof configSchema>;

/**
 * The plan of the pooled accounts that Claude Code is told (`CLAUDE_CODE_SUBSCRIPTION_TYPE`): it
 * picks Claude Code's default model and the label it shows (docs/claude-code-client.md). The VS Code
 * setting `claudeRouter.terminal.subscriptionType`.
 */
export const subscriptionTypeSchema = z.enum(['max', 'pro']);
export type SubscriptionType = z.infer<typeof subscriptionTypeSchema>;

/** Effective values of the non-routing part. */
export interface ServerSettings {
  host: string;
  port: number;
  upstreamBaseUrl: string;
  tokenUrl: string;
}

export const DEFAULT_SERVER_SETTINGS: Readonly<ServerSettings> = Object.freeze({
  host: '127.0.0.1',
  port: DEFAULT_PORT,
  upstreamBaseUrl: 'https://api.anthropic.com',
  tokenUrl: 'https://platform.claude.com/v1/oauth/token',
});

/** Routing input → complete policy (defaults filled in). */
export function policyFrom(input: RoutingInput | undefined, env: NodeJS.ProcessEnv = process.env) {
  return Object.freeze({
    ...DEFAULT_POLICY,
    ...Object.fromEntries(Object.entries(input ?? {}).filter(([, v]) => v !== undefined)),
    quotaRouting: (env.CLAUDE_ROUTER_QUOTA_ROUTING ?? '').trim().toLowerCase() !== 'off',
  });
}
