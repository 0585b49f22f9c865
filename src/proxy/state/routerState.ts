/**
 * RouterState: everything that outlives one request, in one place — quota
 * snapshots, cooldowns, sign-in flags, in-flight leases, session bindings and
 * counters. The router, `/status` and the VS Code views all read it through
 * the same functions, so what the UI shows is what the router will do.
 *
 * Persistence: `toSaved()` / `restore()` give a JSON shape with no secrets;
 * the host (CLI or extension) decides where it is written.
 */
import { EventEmitter } from 'node:events';
import type { Cooldown, QuotaSnapshot } from '../../quota/types';
import { mergeSnapshot } from '../../quota/merge';
import { cooldownClearedBy, mergeCooldown } from '../../quota/cooldown';
import { SessionAffinityStore, type SavedBinding } from '../../routing/affinity';
import { toStickyKeyHash } from '../../routing/identify';
import { ConcurrencyTable } from './concurrency';
import { LeaseTable } from './leases';

/** Counters shown in `/status`. */
export interface RouterCounters {
  requests: number;
  served: number;
  failovers: number;
  noUsableAccount: number;
  errors: number;
  clientAborts: number;
}

/** The persisted part of the state (no secrets). */
export interface SavedRouterState {
  version: 1;
  savedAtMs: number;
  /** Counts saves of this file, across routers (see persistence.ts); absent in files of older versions (read as 0). */
  generation?: number;
  snapshots: Record<string, QuotaSnapshot>;
  cooldowns: Record<string, Cooldown>;
  needsSignIn: Record<string, string>;
  /** Keyed by the sticky key's hash (`sessionId` holds the hash, never a raw id). */
  bindings: SavedBinding[];
}

export class RouterState {
  readonly snapshots = new Map<string, QuotaSnapshot>();
  readonly cooldowns = new Map<string, Cooldown>();
  /** Accounts that need a person to sign in again, with a short reason (never a token). */
  readonly needsSignIn = new Map<string, string>();
  readonly leases: LeaseTable;
  /** Concurrency limits learned from the upstream's throttles, and admission ramps (not saved). */
  readonly concurrency: ConcurrencyTable;
  readonly affinity: SessionAffinityStore;
  readonly counters: RouterCounters = { requests: 0, served: 0, failovers: 0, noUsableAccount: 0, errors: 0, clientAborts: 0 };
  /** Requests started, for round-robin. */
  roundRobinCursor = 0;
  /** Emits `changed` (coalesced to one per tick) whenever anything above changes. */
  readonly events = new EventEmitter();
  private changePending = false;

  constructor(idleTtlMs: number) {
    this.leases = new LeaseTable(() => this.changed());
    this.concurrency = new ConcurrencyTable(() => this.changed());
    this.affinity = new SessionAffinityStore(idleTtlMs);
  }

  /**
   * Records quota evidence; fresh `allowed` evidence clears a cooldown it
   * contradicts — but only evidence from a request sent after the cooldown was
   * set: a request already in flight when the account was throttled proves
   * nothing about the throttle.
   * @param sentAtMs when the request that produced the evidence was sent, epoch ms
   */
  recordEvidence(account: string, snapshot: QuotaSnapshot, sentAtMs: number): void {
    const merged = mergeSnapshot(this.snapshots.get(account), snapshot);
    this.snapshots.set(account, merged);
    const cd = this.cooldowns.get(account);
    if (cd && sentAtMs > cd.setAtMs && cooldownClearedBy(cd, merged)) this.cooldowns.delete(account);
    this.changed();
  }

  /** Sets a cooldown; never shortens an existing one. */
  setCooldown(account: string, cooldown: Cooldown): void {
    this.cooldowns.set(account, mergeCooldown(this.cooldowns.get(account), cooldown));
    this.changed();
  }

  markNeedsSignIn(account: string, reason: string): void {
    this.needsSignIn.set(account, reason);
    this.changed();
  }

  clearNeedsSignIn(account: string): void {
    if (this.needsSignIn.delete(account)) this.changed();
  }

  /** Forgets an account that was removed. */
  forgetAccount(account: string): void {
    this.snapshots.delete(account);
    this.cooldowns.delete(account);
    this.needsSignIn.delete(account);
    this.affinity.forgetAccount(account);
    this.concurrency.forget(account);
    this.changed();
  }

  /** Counts a `/v1/messages` request as it is planned. The `count*` methods are the only writers of the counters. */
  countRequestStarted(): void {
    this.counters.requests++;
  }

  /** Counts a move to the next account, as it happens. */
  countFailover(): void {
    this.counters.failovers++;
  }

  /** Counts how a request ended. */
  countOutcome(outcome: string): void {
    const c = this.counters;
    if (outcome === 'success') c.served++;
    else if (outcome === 'client_abort') c.clientAborts++;
    else if (outcome === 'no_usable_account') c.noUsableAccount++;
    this.changed();
  }

  /** Counts a request that ended in an internal error (it has no decision record). */
  countInternalError(): void {
    this.counters.errors++;
    this.changed();
  }

  /** Signals a change (bindings change without passing through a setter). */
  changed(): void {
    if (this.changePending) return;
    this.changePending = true;
    queueMicrotask(() => {
      this.changePending = false;
      this.events.emit('changed');
    });
  }

  /** The persisted shape at `now` (expired bindings and cooldowns dropped). */
  toSaved(now: number): SavedRouterState {
    return {
      version: 1,
      savedAtMs: now,
      snapshots: Object.fromEntries(this.snapshots),
      cooldowns: Object.fromEntries([...this.cooldowns].filter(([, c]) => c.untilMs > now)),
      needsSignIn: Object.fromEntries(this.needsSignIn),
      bindings: this.affinity.live(now),
    };
  }

  /** Restores a saved state; unknown shapes are ignored (the seed's default: start empty). */
  restore(saved: unknown, now: number): boolean {
    if (!isSavedState(saved)) return false;
    this.fill(saved, now);
    return true;
  }

  /**
   * Replaces snapshots, cooldowns, sign-in flags and bindings by a saved state (a window
   * taking over the proxy: its own copy is older than the file). Leases and counters stay.
   * @returns false (and changes nothing) for an unknown shape
   */
  replaceWith(saved: unknown, now: number): boolean {
    if (!isSavedState(saved)) return false;
    this.snapshots.clear();
    this.cooldowns.clear();
    this.needsSignIn.clear();
    this.affinity.clear();
    this.fill(saved, now);
    return true;
  }

  /**
   * Folds a state saved by another router into this one without losing either's news: the
   * newest evidence per window, the later-ending cooldown, per session the later binding.
   * Sign-in flags stay this router's (a cleared flag came from new credentials).
   * @returns false (and changes nothing) for an unknown shape
   */
  absorb(saved: unknown, now: number): boolean {
    if (!isSavedState(saved)) return false;
    for (const [k, v] of Object.entries(saved.snapshots)) this.snapshots.set(k, mergeSnapshot(this.snapshots.get(k), v));
    for (const [k, v] of Object.entries(saved.cooldowns)) if (v.untilMs > now) this.cooldowns.set(k, mergeCooldown(this.cooldowns.get(k), v));
    for (const b of hashedBindings(saved.bindings)) {
      const mine = this.affinity.get(b.sessionId, now);
      if (!mine || mine.lastServedAtMs < b.lastServedAtMs) this.affinity.load([b], now);
    }
    this.changed();
    return true;
  }

  private fill(saved: SavedRouterState, now: number): void {
    for (const [k, v] of Object.entries(saved.snapshots)) this.snapshots.set(k, v);
    for (const [k, v] of Object.entries(saved.cooldowns)) if (v.untilMs > now) this.cooldowns.set(k, v);
    for (const [k, v] of Object.entries(saved.needsSignIn)) this.needsSignIn.set(k, v);
    this.affinity.load(hashedBindings(saved.bindings), now);
    this.changed();
  }
}

/** Bindings keyed by sticky-key hash: a file saved by a version that kept raw session ids is converted as it is read. */
function hashedBindings(bindings: readonly SavedBinding[]): SavedBinding[] {
  return bindings.map((b) => (typeof b.sessionId === 'string' ? { ...b, sessionId: toStickyKeyHash(b.sessionId) } : b));
}

function isSavedState(v: unknown): v is SavedRouterState {
  if (!v || typeof v !== 'object') return false;
  const s = v as Partial<SavedRouterState>;
  return (
    s.version === 1 &&
    typeof s.snapshots === 'object' &&
    s.snapshots !== null &&
    typeof s.cooldowns === 'object' &&
    s.cooldowns !== null &&
    typeof s.needsSignIn === 'object' &&
    s.needsSignIn !== null &&
    Array.isArray(s.bindings)
  );
}
