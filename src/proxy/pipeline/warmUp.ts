/**
 * The limit warm-up (docs/routing.md#limit-warm-up): when quota evidence shows that a usage window
 * of an account with `warm-up: true` has newly reset (src/routing/probe.ts, `newlyResetWindow`),
 * the router sends that account one small real request of its own — `routing.warm-up-model`, a
 * fixed one-word prompt, `max_tokens: 1` — to verify that it answers. It spends a little quota.
 * It is a probe of the one probe module (src/proxy/state/probes.ts): never more than one probe of
 * an account in flight, a failure backs the next one off. Never for an account cooling for a
 * reason other than a transient one, or one that needs sign-in. Its result goes on the account
 * (`RouterState.warmUps`) and into the decision log marked `warmUp`.
 */
import { isTransientCooldown } from '../../quota/cooldown';
import { parseUnifiedHeaders } from '../../quota/headers';
import { policyFacts, type DecisionRecord } from '../../routing/decision';
import type { ResetWindow } from '../../routing/probe';
import { OAUTH_BETA } from '../upstream/agent';
import { callUpstream, ClientLink } from '../upstream/call';
import { nextRequestId, type RouterServices } from './context';

/** The prompt of every warm-up: one word, so the request costs the fewest tokens. */
export const WARM_UP_PROMPT = 'hi';
/** The Messages API version the warm-up speaks (docs/anthropic-api.md#forwarding). */
const ANTHROPIC_VERSION = '2023-06-01';
/** The most of a warm-up's answer that is read, bytes: one token's answer is far below it. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Sends `label`'s warm-up for the newly reset `window` when the account has opted in and may take
 * a probe now; resolves when it has ended and been recorded (at once when none is sent).
 */
export async function warmUp(s: RouterServices, label: string, window: ResetWindow): Promise<void> {
  const config = s.live.config;
  const info = s.live.accountsByLabel.get(label);
  if (!info?.warmUp || !info.enabled || info.fallback || info.kind !== 'oauth' || s.state.needsSignIn.has(label)) return;
  const now = s.now();
  const cooldown = s.state.cooldowns.get(label);
  if (cooldown && cooldown.untilMs > now && !isTransientCooldown(cooldown.reason)) return;
  const ticket = s.state.probes.begin(label, 'warm_up', now);
  if (!ticket) return;
  const model = config.policy.warmUpModel;
  let status = 0;
  try {
    const creds = s.tokens.ready(label) ?? (await s.tokens.current(label));
    const body = Buffer.from(JSON.stringify({ model, max_tokens: 1, messages: [{ role: 'user', content: WARM_UP_PROMPT }] }));
    const headers = [
      'content-type',
      'application/json',
      'anthropic-version',
      ANTHROPIC_VERSION,
      'anthropic-beta',
      OAUTH_BETA,
      'authorization',
      `Bearer ${creds.accessToken}`,
      'accept-encoding',
      'identity',
    ];
    const sentAtMs = s.now();
    const call = await callUpstream<never>(s.dispatcher, { origin: config.upstreamBaseUrl, path: '/v1/messages', method: 'POST', headers, body }, new ClientLink(), (head) => {
      status = head.status;
      const snapshot = parseUnifiedHeaders(head.headers, s.now());
      // Its quota headers are evidence like any answer's (the reset that triggered it is already past, so it triggers nothing).
      if (snapshot && s.live.accountsByLabel.has(label)) s.state.recordEvidence(label, snapshot, sentAtMs);
      return { buffer: MAX_ANSWER_BYTES };
    });
    if (call.kind === 'failed') status = 0;
  } catch (err) {
    s.log.warn(`warm-up ${label}: ${(err as Error).message}`);
  }
  const ok = status >= 200 && status < 300;
  const end = s.now();
  ticket.end(ok, end);
  s.state.recordWarmUp(label, { atMs: now, model, window, ok, status });
  s.decisions.append(warmUpRecord(s, label, window, model, now, end, status));
  s.log.info(`warm-up ${label}: ${window} window reset; ${model} answered ${status || 'nothing'}`);
}

/** The decision record of a warm-up: the router's own request, marked `warmUp`, with no plan or session. */
function warmUpRecord(s: RouterServices, label: string, window: ResetWindow, model: string, startMs: number, endMs: number, status: number): DecisionRecord {
  const policy = s.live.config.policy;
  const ok = status >= 200 && status < 300;
  return {
    schemaVersion: 2,
    ts: new Date(startMs).toISOString(),
    requestId: nextRequestId(),
    stickyKeySource: 'none',
    stickyKind: 'none',
    stickyKeyHash: null,
    path: '/v1/messages',
    model,
    stream: false,
    strategy: policy.strategy,
    ranking: policy.accountRanking,
    policy: policyFacts(policy),
    selectionReason: 'warm_up',
    rankingOrder: [label],
    candidates: [],
    affinity: { sessionBound: false, boundAccount: null, applied: false, skippedReason: 'no_session' },
    spill: null,
    policyError: null,
    usableAccounts: 0,
    servedBy: ok ? label : null,
    servedByFallback: false,
    attempts: [{ account: label, status, result: ok ? 'success' : status === 0 ? 'network_error' : 'warm_up_failed', ms: endMs - startMs }],
    warmUp: { window },
    outcome: ok ? 'success' : status === 0 || status >= 500 ? 'upstream_error' : 'client_error',
    status,
    usage: null,
    durationMs: endMs - startMs,
  };
}
