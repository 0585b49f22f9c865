/**
 * What the other routers of a shared pool tell this one (docs/shared-pool.md), folded into its
 * RouterState: their quota evidence, cooldowns and lifts, resets, session bindings, learned limits
 * and served usage. sharedState.ts reads the store and calls these; the router's own changes go the
 * other way through the state's `mirror`. Each rule keeps the newest news and never shortens a
 * cooldown; none of them tells the pool back.
 */
import type { Cooldown, QuotaSnapshot } from '../../quota/types';
import { mergeSnapshot } from '../../quota/merge';
import { mergeCooldown } from '../../quota/cooldown';
import type { SavedLearnedCosts, TokensByKind } from '../../quota/learnedCosts';
import type { SavedBinding } from '../../routing/affinity';
import type { LearnedLimit } from '../../routing/concurrencyLimit';
import type { RouterState } from './routerState';

/** Usage another router of the pool served on `account`: its learned costs count it as this router's own. */
export function absorbServed(state: RouterState, account: string, tokens: TokensByKind, family: string | undefined): void {
  state.learnedCosts.served(account, tokens, family);
}

/** Another router's learners (the pool's copy): per window, the one with more samples wins. */
export function absorbLearnedCosts(state: RouterState, saved: SavedLearnedCosts): void {
  state.learnedCosts.load(saved, false);
}

/** Another router's quota evidence (the shared store): merged in by the newest-evidence rule; lifts nothing (the router that saw it lifts and says so). */
export function absorbEvidence(state: RouterState, account: string, snapshot: QuotaSnapshot): void {
  state.snapshots.set(account, mergeSnapshot(state.snapshots.get(account), snapshot));
  state.changed();
}

/** Another router's cooldown (`family` null: account-wide), merged in: never shortens one. Ended ones (at `now`, epoch ms) are ignored. */
export function absorbCooldown(state: RouterState, account: string, family: string | null, cooldown: Cooldown, now: number): void {
  if (!(cooldown.untilMs > now)) return;
  if (family === null) state.cooldowns.set(account, mergeCooldown(state.cooldowns.get(account), cooldown));
  else {
    let scoped = state.scopedCooldowns.get(account);
    if (!scoped) state.scopedCooldowns.set(account, (scoped = new Map<string, Cooldown>()));
    scoped.set(family, mergeCooldown(scoped.get(family), cooldown));
  }
  state.changed();
}

/** Another router lifted a cooldown ending at `untilMs` (epoch ms): this router's is lifted too unless it ends later. */
export function absorbLift(state: RouterState, account: string, family: string | null, untilMs: number): void {
  const scoped = family === null ? undefined : state.scopedCooldowns.get(account);
  const mine = family === null ? state.cooldowns.get(account) : scoped?.get(family);
  if (!mine || mine.untilMs > untilMs) return;
  if (family === null) state.dropCooldown(account);
  else {
    scoped!.delete(family);
    if (scoped!.size === 0) state.scopedCooldowns.delete(account);
  }
  state.changed();
}

/** A person reset `account`'s cooldown through another router: the same here, nothing told back. */
export function absorbReset(state: RouterState, account: string): void {
  const mirror = state.mirror;
  state.mirror = undefined;
  try {
    state.resetCooldown(account);
  } finally {
    state.mirror = mirror;
  }
}

/** Another router's binding of a session: taken when it was served later than this router's, and is live at `now` (epoch ms). */
export function absorbBinding(state: RouterState, binding: SavedBinding, now: number): void {
  const mine = state.affinity.get(binding.sessionId, now);
  if (mine && mine.lastServedAtMs >= binding.lastServedAtMs) return;
  state.affinity.load([binding], now);
  state.changed();
}

/** Another router's learned concurrency limit of `label` (undefined: forgotten): the newest wins. */
export function absorbLimit(state: RouterState, label: string, learned: LearnedLimit | undefined): void {
  state.concurrency.absorb(label, learned);
}
