/**
 * Per-account prompt cache and token estimates. Token counts are estimates: ceil(UTF-8 bytes / 4).
 * The cache is keyed by session id only (not by content): a session's next turn on the same
 * account reads what the previous turn wrote, on another account it writes afresh.
 */

/** Usage fields that depend on caching (Anthropic's names). */
export interface PromptUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/** Estimated tokens of a string: ceil(UTF-8 bytes / 4). */
export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') / 4);
}

/** Tokens of the whole prompt: ceil(bytes of JSON.stringify({system, tools, messages}) / 4), at least 1. */
export function promptTokensOf(body: { system?: unknown; tools?: unknown; messages?: unknown }): number {
  return Math.max(1, estimateTokens(JSON.stringify({ system: body.system, tools: body.tools, messages: body.messages })));
}

/** Tokens of the last message only, at least 1 (the uncached tail of a turn). */
export function lastMessageTokensOf(body: { messages?: unknown }): number {
  const msgs: unknown[] = Array.isArray(body.messages) ? body.messages : [];
  const last = msgs.length > 0 ? msgs[msgs.length - 1] : '';
  return Math.max(1, estimateTokens(JSON.stringify(last) ?? ''));
}

interface CacheEntry {
  tokens: number;
  /** Last use, epoch ms. */
  lastUsedMs: number;
}

/** One account's prompt cache. */
export class PromptCache {
  private readonly entries = new Map<string, CacheEntry>();
  private commits = 0;

  /** @param ttlMs entry lifetime after its last use, ms */
  constructor(private readonly ttlMs: number) {}

  /**
   * Usage for a prompt of `promptTokens` whose last message is `tailTokens`, at `nowMs`.
   * No session: everything is plain input. Live entry: read min(cached, prompt − tail), write
   * the rest minus the tail. Otherwise write prompt − tail. Pure (does not touch the entry).
   */
  plan(sessionId: string | null, promptTokens: number, tailTokens: number, nowMs: number): PromptUsage {
    if (sessionId === null) {
      return { input_tokens: promptTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    }
    const input = Math.min(Math.max(1, tailTokens), promptTokens);
    const e = this.entries.get(sessionId);
    const live = e !== undefined && nowMs - e.lastUsedMs <= this.ttlMs;
    const read = live ? Math.max(0, Math.min(e.tokens, promptTokens - input)) : 0;
    return { input_tokens: input, cache_creation_input_tokens: promptTokens - read - input, cache_read_input_tokens: read };
  }

  /** Record that the session's prompt of `promptTokens` is now cached, used at `nowMs`. */
  commit(sessionId: string | null, promptTokens: number, nowMs: number): void {
    if (sessionId === null) return;
    this.entries.set(sessionId, { tokens: promptTokens, lastUsedMs: nowMs });
    if (++this.commits % 1000 === 0) this.sweep(nowMs);
  }

  /** Whether a live entry exists for the session at `nowMs`. */
  has(sessionId: string, nowMs: number): boolean {
    const e = this.entries.get(sessionId);
    return e !== undefined && nowMs - e.lastUsedMs <= this.ttlMs;
  }

  private sweep(nowMs: number): void {
    for (const [k, e] of this.entries) if (nowMs - e.lastUsedMs > this.ttlMs) this.entries.delete(k);
  }
}
