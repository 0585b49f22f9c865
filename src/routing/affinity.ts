/**
 * Session-affinity store: which account a Claude Code session is bound to, keyed by the
 * session's sticky-key hash (src/routing/identify.ts; never a raw session id).
 *
 * Least-recently-bound eviction at a fixed capacity (lru-cache, read with
 * `peek` so a read never refreshes recency), and an idle TTL that runs from the
 * last request served for the session: looking an entry up never extends it, exactly TTL still
 * counts as live, and an expired entry is purged on read. Time is always an
 * argument (epoch ms), so tests need no fake timers.
 */
import { LRUCache } from 'lru-cache';

/** Default capacity (sessions). */
export const AFFINITY_CAPACITY = 5_000;

/** A live binding. */
export interface SessionBinding {
  account: string;
  /** When the session was last served (bound or re-bound), epoch ms. */
  lastServedAtMs: number;
}

/** A saved binding, for persistence across restarts. */
export interface SavedBinding extends SessionBinding {
  /** The sticky key's hash (src/routing/identify.ts), which the store is keyed by. */
  sessionId: string;
}

export class SessionAffinityStore {
  private readonly cache: LRUCache<string, SessionBinding>;

  /**
   * @param idleTtlMs idle TTL in ms
   * @param capacity maximum number of sessions kept
   */
  constructor(
    private idleTtlMs: number,
    capacity = AFFINITY_CAPACITY,
  ) {
    this.cache = new LRUCache<string, SessionBinding>({ max: capacity });
  }

  /** The idle TTL in force, ms. */
  get idleTtl(): number {
    return this.idleTtlMs;
  }

  /** Changes the idle TTL (a policy reload); existing bindings are judged by the new TTL. */
  setIdleTtl(idleTtlMs: number): void {
    this.idleTtlMs = idleTtlMs;
  }

  /** The live binding of a session at `now`, or undefined (expired entries are removed). */
  get(sessionId: string, now: number): SessionBinding | undefined {
    const b = this.cache.peek(sessionId);
    if (!b) return undefined;
    if (now - b.lastServedAtMs > this.idleTtlMs) {
      this.cache.delete(sessionId);
      return undefined;
    }
    return b;
  }

  /** Binds (or re-binds) a session to the account that served it at `now`. */
  bind(sessionId: string, account: string, now: number): void {
    this.cache.set(sessionId, { account, lastServedAtMs: now });
  }

  /** Drops every binding to an account (it was removed). */
  forgetAccount(account: string): void {
    for (const [id, b] of this.cache.entries()) if (b.account === account) this.cache.delete(id);
  }

  clear(): void {
    this.cache.clear();
  }

  /** Number of live bindings at `now` (purges expired ones). */
  liveCount(now: number): number {
    return this.live(now).length;
  }

  /** Live bindings at `now`, most recently bound first. */
  live(now: number): SavedBinding[] {
    const out: SavedBinding[] = [];
    for (const id of [...this.cache.keys()]) {
      const b = this.get(id, now);
      if (b) out.push({ sessionId: id, ...b });
    }
    return out;
  }

  /** Restores saved bindings (oldest first keeps the recency order). */
  load(saved: readonly SavedBinding[], now: number): void {
    for (const b of [...saved].reverse()) {
      if (now - b.lastServedAtMs <= this.idleTtlMs) this.cache.set(b.sessionId, { account: b.account, lastServedAtMs: b.lastServedAtMs });
    }
  }
}
