/**
 * The router state's saved form (no secrets): the JSON shape `RouterState.toSaved()` writes and
 * the three ways it is read back — `restore` (a fresh state), `replaceWith` (a window taking over
 * the proxy: the file is newer than its copy) and `absorb` (another router's file folded in,
 * newest news winning). The host (CLI or extension, through persistence.ts) decides where it is
 * written. Works on the parts of the state it saves ({@link SavedParts}), never on the request path.
 */
import type { Cooldown, QuotaSnapshot } from '../../quota/types';
import { mergeSnapshot } from '../../quota/merge';
import { mergeCooldown } from '../../quota/cooldown';
import type { LearnedCosts, SavedLearnedCosts } from '../../quota/learnedCosts';
import type { SavedBinding, SessionAffinityStore } from '../../routing/affinity';
import { toStickyKeyHash } from '../../routing/identify';

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
  /** Model-scoped cooldowns still running, by account, then model family; absent in files of older versions. */
  scopedCooldowns?: Record<string, Record<string, Cooldown>>;
  /** What was learned of each account's windows' cost per token (src/quota/learnedCosts.ts); absent in files of older versions. */
  learnedCosts?: SavedLearnedCosts;
}

/** The parts of a RouterState that are saved, and its change signal. */
export interface SavedParts {
  readonly snapshots: Map<string, QuotaSnapshot>;
  readonly cooldowns: Map<string, Cooldown>;
  readonly scopedCooldowns: Map<string, Map<string, Cooldown>>;
  readonly needsSignIn: Map<string, string>;
  readonly affinity: SessionAffinityStore;
  readonly learnedCosts: LearnedCosts;
  changed(): void;
}

/** The persisted shape of `state` at `now` (expired bindings and cooldowns dropped). */
export function savedOf(state: SavedParts, now: number): SavedRouterState {
  return {
    version: 1,
    savedAtMs: now,
    snapshots: Object.fromEntries(state.snapshots),
    cooldowns: Object.fromEntries([...state.cooldowns].filter(([, c]) => c.untilMs > now)),
    needsSignIn: Object.fromEntries(state.needsSignIn),
    bindings: state.affinity.live(now),
    scopedCooldowns: Object.fromEntries(
      [...state.scopedCooldowns]
        .map(([account, m]) => [account, Object.fromEntries([...m].filter(([, c]) => c.untilMs > now))] as const)
        .filter(([, m]) => Object.keys(m).length > 0),
    ),
    learnedCosts: state.learnedCosts.toSaved(),
  };
}

/** Restores a saved state into `state`; unknown shapes are ignored (the seed's default: start empty). */
export function restoreSaved(state: SavedParts, saved: unknown, now: number): boolean {
  if (!isSavedState(saved)) return false;
  fill(state, saved, now);
  return true;
}

/**
 * Replaces snapshots, cooldowns, sign-in flags and bindings by a saved state (a window
 * taking over the proxy: its own copy is older than the file). Leases and counters stay.
 * @returns false (and changes nothing) for an unknown shape
 */
export function replaceWithSaved(state: SavedParts, saved: unknown, now: number): boolean {
  if (!isSavedState(saved)) return false;
  state.snapshots.clear();
  state.cooldowns.clear();
  state.scopedCooldowns.clear();
  state.needsSignIn.clear();
  state.affinity.clear();
  state.learnedCosts.clear();
  fill(state, saved, now);
  return true;
}

/**
 * Folds a state saved by another router into `state` without losing either's news: the
 * newest evidence per window, the later-ending cooldown, per session the later binding.
 * Sign-in flags stay this router's (a cleared flag came from new credentials).
 * @returns false (and changes nothing) for an unknown shape
 */
export function absorbSaved(state: SavedParts, saved: unknown, now: number): boolean {
  if (!isSavedState(saved)) return false;
  for (const [k, v] of Object.entries(saved.snapshots)) state.snapshots.set(k, mergeSnapshot(state.snapshots.get(k), v));
  for (const [k, v] of Object.entries(saved.cooldowns)) if (v.untilMs > now) state.cooldowns.set(k, mergeCooldown(state.cooldowns.get(k), v));
  loadScoped(state, saved, now);
  state.learnedCosts.load(saved.learnedCosts, false);
  for (const b of hashedBindings(saved.bindings)) {
    const mine = state.affinity.get(b.sessionId, now);
    if (!mine || mine.lastServedAtMs < b.lastServedAtMs) state.affinity.load([b], now);
  }
  state.changed();
  return true;
}

function fill(state: SavedParts, saved: SavedRouterState, now: number): void {
  for (const [k, v] of Object.entries(saved.snapshots)) state.snapshots.set(k, v);
  for (const [k, v] of Object.entries(saved.cooldowns)) if (v.untilMs > now) state.cooldowns.set(k, v);
  loadScoped(state, saved, now);
  for (const [k, v] of Object.entries(saved.needsSignIn)) state.needsSignIn.set(k, v);
  state.learnedCosts.load(saved.learnedCosts);
  state.affinity.load(hashedBindings(saved.bindings), now);
  state.changed();
}

/** Folds the saved scoped cooldowns still running into the state's (the later end wins). A malformed member is skipped. */
function loadScoped(state: SavedParts, saved: SavedRouterState, now: number): void {
  const all = saved.scopedCooldowns;
  if (!all || typeof all !== 'object') return;
  for (const [account, families] of Object.entries(all)) {
    if (!families || typeof families !== 'object') continue;
    for (const [family, c] of Object.entries(families)) {
      if (!c || typeof c.untilMs !== 'number' || !(c.untilMs > now)) continue;
      let mine = state.scopedCooldowns.get(account);
      if (!mine) state.scopedCooldowns.set(account, (mine = new Map<string, Cooldown>()));
      mine.set(family, mergeCooldown(mine.get(family), c));
    }
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
