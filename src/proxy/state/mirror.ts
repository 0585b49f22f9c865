/**
 * What RouterState tells a shared store of its own changes (sharedState.ts implements it when the
 * router shares its pool through Redis; without one, nothing is told). Changes that came from the
 * store are folded in through RouterState's `absorb…` methods, which tell the mirror nothing, so a
 * change never echoes back.
 */
import type { LearnedLimit } from '../../routing/concurrencyLimit';
import type { Cooldown, QuotaSnapshot } from '../../quota/types';
import type { TokensByKind } from '../../quota/learnedCosts';

export interface StateMirror {
  /** `account`'s quota evidence after a new reading was merged in. */
  evidence(account: string, merged: QuotaSnapshot): void;
  /** A cooldown as it stands after a merge; `family` null for an account-wide one, else its model family. */
  cooldown(account: string, family: string | null, merged: Cooldown): void;
  /** A cooldown lifted early (evidence, a probe); `family` as above. */
  lifted(account: string, family: string | null, cooldown: Cooldown): void;
  /** A person's "Reset Cooldown" on `account` (every router lifts it and drops its rejecting evidence). */
  reset(account: string): void;
  /** A session served (bound or re-bound) at `lastServedAtMs` (epoch ms); `moved`: it was bound elsewhere, or not at all, before. */
  bound(session: string, account: string, lastServedAtMs: number, moved: boolean): void;
  /** `account`'s learned concurrency limit changed (undefined: forgotten). */
  limit(account: string, learned: LearnedLimit | undefined): void;
  /** This router's in-flight counts or reservations changed. */
  inflight(): void;
  /** Usage `account` served through this router (the pool's learners count every router's usage against the same evidence). */
  served(account: string, tokens: TokensByKind, family: string | undefined): void;
}
