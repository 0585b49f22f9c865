/**
 * RouterState: everything that outlives one request, in one place — quota
 * snapshots, cooldowns (account-wide and model-scoped), sign-in flags, in-flight
 * leases, probes, session bindings and counters. The router, `/status` and the VS Code views all read it through
 * the same functions, so what the UI shows is what the router will do.
 *
 * Persistence: `toSaved()` / `restore()` give a JSON shape with no secrets (savedState.ts);
 * the host (CLI or extension) decides where it is written. In a shared pool, the other routers'
 * news is folded in by peerState.ts, and this router's goes out through `mirror`.
 */
import { EventEmitter } from 'node:events';
import type { Cooldown, CooldownReason, QuotaSnapshot, ResponseClass } from '../../quota/types';
import { UnifiedHeaderReader } from '../../quota/headers';
import { mergeSnapshot } from '../../quota/merge';
import { cooldownClearedBy, mergeCooldown } from '../../quota/cooldown';
import { planScopedCooldown, scopedCooldownClearedBy } from '../../quota/scopedCooldown';
import { isRejectionStatus } from '../../quota/status';
import { LearnedCosts, weightedTokens, type TokensByKind } from '../../quota/learnedCosts';
import { SessionWork } from '../../routing/sessionWork';
import { SessionAffinityStore } from '../../routing/affinity';
import { newlyResetWindow, type ResetWindow } from '../../routing/probe';
import { AccountPerformance } from './accountPerformance';
import { ConcurrencyTable } from './concurrency';
import { LeaseTable } from './leases';
import { OutputSamples } from './outputSamples';
import { ProbeTable } from './probes';
import { UsageHistory } from './usageHistory';
import type { StateMirror } from './mirror';
import { absorbSaved, replaceWithSaved, restoreSaved, savedOf, type SavedRouterState } from './savedState';

/** Counters shown in `/status`. */
export interface RouterCounters {
  requests: number;
  served: number;
  failovers: number;
  noUsableAccount: number;
  errors: number;
  clientAborts: number;
}

/** The last limit warm-up of an account (docs/routing.md#limit-warm-up). Not saved. */
export interface WarmUpResult {
  /** When it was sent, epoch ms. */
  atMs: number;
  /** The model it asked (`routing.warm-up-model`). */
  model: string;
  /** The window whose reset it followed. */
  window: ResetWindow;
  /** The account answered 2xx. */
  ok: boolean;
  /** The upstream's status; 0 when no answer came (network error). */
  status: number;
}

/** What {@link RouterState.resetCooldown} lifted. */
export interface CooldownReset {
  /** The account-wide cooldown that was running, if any. */
  cooldown: Cooldown | undefined;
  /** The model families whose scoped cooldown was running. */
  scopedFamilies: string[];
  /** The quota snapshot showed a rejected window and was dropped (fresh evidence replaces it). */
  droppedEvidence: boolean;
}

export class RouterState {
  readonly snapshots = new Map<string, QuotaSnapshot>();
  /** Reads the answers' quota headers, parsing only those that differ from the account's previous answer's. */
  readonly headerReader = new UnifiedHeaderReader();
  readonly cooldowns = new Map<string, Cooldown>();
  /** Model-scoped cooldowns by account, then model family (docs/routing.md#cooldowns). */
  readonly scopedCooldowns = new Map<string, Map<string, Cooldown>>();
  /** Accounts that need a person to sign in again, with a short reason (never a token). */
  readonly needsSignIn = new Map<string, string>();
  /** In-flight leases and the cost they reserve, per account (not saved). */
  readonly leases: LeaseTable;
  /** What each model really returns: the rolling samples behind the output half of cost leases (not saved). */
  readonly outputs: OutputSamples;
  /** Recovery and evidence probes (src/routing/probe.ts); not saved. */
  readonly probes: ProbeTable;
  /** Concurrency limits learned from the upstream's throttles, and admission ramps (not saved). */
  readonly concurrency: ConcurrencyTable;
  readonly affinity: SessionAffinityStore;
  /** Each account's windows' cost per weighted token, learned from its snapshots against the usage it served (saved). */
  readonly learnedCosts = new LearnedCosts();
  /** The expected work of the sessions bound to each account, kept incrementally for `forecast` (in memory only). */
  readonly sessionWork: SessionWork;
  /** Recent latency and failures per account (in memory only). */
  readonly performance = new AccountPerformance();
  /**
   * Each account's utilisation, requests and tokens over the last 7 days (bounded: usageHistory.ts). Saved in its own file
   * by persistence.ts, at most once a minute; changing it signals no change (it changes with every request).
   */
  readonly history = new UsageHistory();
  /** Each account's last limit warm-up. */
  readonly warmUps = new Map<string, WarmUpResult>();
  readonly counters: RouterCounters = { requests: 0, served: 0, failovers: 0, noUsableAccount: 0, errors: 0, clientAborts: 0 };
  /** Requests started, for round-robin. */
  roundRobinCursor = 0;
  /**
   * Emits `changed` (coalesced to one per tick) whenever anything above changes, `windowReset`
   * (label, {@link ResetWindow}) when evidence shows a window newly reset, and `cooldownLifted`
   * (label) when an account's cooldown is dropped before its end or at it (requests waiting for it may go).
   */
  readonly events = new EventEmitter();
  /** Told of this router's changes worth sharing when the pool is shared through a store (sharedState.ts); undefined otherwise. */
  mirror: StateMirror | undefined;
  private changePending = false;

  constructor(idleTtlMs: number) {
    this.outputs = new OutputSamples(() => this.changed());
    this.leases = new LeaseTable(
      () => this.changed(),
      this.outputs,
      () => this.mirror?.inflight(),
    );
    this.probes = new ProbeTable(() => this.changed());
    this.concurrency = new ConcurrencyTable(
      () => this.changed(),
      (label, learned) => this.mirror?.limit(label, learned),
    );
    this.affinity = new SessionAffinityStore(idleTtlMs);
    this.sessionWork = new SessionWork(idleTtlMs);
  }

  /** Records `account`'s last limit warm-up. */
  recordWarmUp(account: string, result: WarmUpResult): void {
    this.warmUps.set(account, result);
    this.changed();
  }

  /**
   * Records quota evidence; evidence that a cooldown (account-wide or model-scoped) is over lifts
   * it — but only evidence from a request sent after the cooldown was set: a request already in
   * flight when the account was throttled proves nothing about the throttle (the rules:
   * `cooldownClearedBy`, `scopedCooldownClearedBy`).
   * @param sentAtMs when the request that produced the evidence was sent, epoch ms
   */
  recordEvidence(account: string, snapshot: QuotaSnapshot, sentAtMs: number): void {
    const before = this.snapshots.get(account);
    this.learnedCosts.observe(account, snapshot);
    const merged = mergeSnapshot(before, snapshot);
    this.snapshots.set(account, merged);
    const reset = newlyResetWindow(before, merged);
    this.mirror?.evidence(account, merged);
    const cd = this.cooldowns.get(account);
    if (cd && cooldownClearedBy(cd, merged, sentAtMs)) {
      this.dropCooldown(account);
      this.mirror?.lifted(account, null, cd);
    }
    const scoped = this.scopedCooldowns.get(account);
    if (scoped) {
      for (const [family, c] of scoped) {
        if (!scopedCooldownClearedBy(c, family, merged, sentAtMs)) continue;
        scoped.delete(family);
        this.mirror?.lifted(account, family, c);
      }
      if (scoped.size === 0) this.scopedCooldowns.delete(account);
    }
    // After the cooldowns it lifts: a listener sees the account as this evidence leaves it.
    if (reset) this.events.emit('windowReset', account, reset);
    this.changed();
  }

  /**
   * Usage an account served (a successful answer's tokens): its learned costs count it, and the
   * session's expected work follows it to the account. O(1).
   * @param session the sticky key's hash, or null: null also when the strategy does not read sessions' expected work (only `forecast` does; the others pay nothing for it)
   * @param family the request's model family, if known
   * @param nowMs when the answer ended, epoch ms
   */
  recordServed(account: string, session: string | null, tokens: TokensByKind, family: string | undefined, nowMs: number): void {
    this.learnedCosts.served(account, tokens, family);
    this.mirror?.served(account, tokens, family);
    if (session !== null) this.sessionWork.served(session, account, weightedTokens(tokens), nowMs);
  }

  /** Remembers a model-scoped rejection until its reset (`planScopedCooldown`); other classes change nothing. Never shortens one. */
  rememberScopedRejection(account: string, cls: ResponseClass, nowMs: number): void {
    const planned = planScopedCooldown(cls, nowMs);
    if (!planned) return;
    let scoped = this.scopedCooldowns.get(account);
    if (!scoped) this.scopedCooldowns.set(account, (scoped = new Map<string, Cooldown>()));
    const merged = mergeCooldown(scoped.get(planned.family), planned.cooldown);
    scoped.set(planned.family, merged);
    this.mirror?.cooldown(account, planned.family, merged);
    this.changed();
  }

  /**
   * A person's "Reset Cooldown": lifts the account's cooldown and its model-scoped cooldowns,
   * forgets its failed probes, and drops its quota snapshot when that shows a rejected window (so
   * the snapshot cannot keep the account out either: the next answer or usage reading brings fresh
   * evidence). Needs-sign-in is not a cooldown and stays.
   */
  resetCooldown(account: string): CooldownReset {
    const cooldown = this.cooldowns.get(account);
    this.dropCooldown(account);
    const scopedFamilies = [...(this.scopedCooldowns.get(account)?.keys() ?? [])];
    this.scopedCooldowns.delete(account);
    this.probes.forget(account);
    const snap = this.snapshots.get(account);
    const droppedEvidence = snap !== undefined && showsRejection(snap);
    if (droppedEvidence) this.snapshots.delete(account);
    this.mirror?.reset(account);
    this.changed();
    return { cooldown, scopedFamilies, droppedEvidence };
  }

  /** Lifts the account's cooldown when it is one for `reason` (a probe proved it over). */
  clearCooldown(account: string, reason: CooldownReason): void {
    const cd = this.cooldowns.get(account);
    if (cd?.reason !== reason) return;
    this.dropCooldown(account);
    this.mirror?.lifted(account, null, cd);
    this.changed();
  }

  /** Sets a cooldown; never shortens an existing one. A `local` one (this router's own pause) is not shared with the pool. */
  setCooldown(account: string, cooldown: Cooldown): void {
    const merged = mergeCooldown(this.cooldowns.get(account), cooldown);
    this.cooldowns.set(account, merged);
    if (!merged.local) this.mirror?.cooldown(account, null, merged);
    this.changed();
  }

  /** A new pair of `account` arrived: this router's own pause for want of one (a `local` cooldown) is over. */
  liftLocalCooldown(account: string): void {
    if (!this.cooldowns.get(account)?.local) return;
    this.dropCooldown(account);
    this.changed();
  }

  /** Binds (or re-binds) a session (its sticky key's hash) to the account that served it at `now` (epoch ms). */
  bind(session: string, account: string, now: number): void {
    const before = this.affinity.get(session, now);
    this.affinity.bind(session, account, now);
    this.mirror?.bound(session, account, now, before?.account !== account);
  }

  markNeedsSignIn(account: string, reason: string): void {
    this.needsSignIn.set(account, reason);
    this.changed();
  }

  /** Drops `account`'s cooldown, and says so when there was one (no change signal: the caller signals). */
  dropCooldown(account: string): void {
    if (this.cooldowns.delete(account)) this.events.emit('cooldownLifted', account);
  }

  clearNeedsSignIn(account: string): void {
    if (this.needsSignIn.delete(account)) this.changed();
  }

  /** Forgets an account that was removed. */
  forgetAccount(account: string): void {
    this.snapshots.delete(account);
    this.dropCooldown(account);
    this.scopedCooldowns.delete(account);
    this.probes.forget(account);
    this.warmUps.delete(account);
    this.needsSignIn.delete(account);
    this.affinity.forgetAccount(account);
    this.performance.forgetAccount(account);
    this.concurrency.forget(account);
    this.learnedCosts.forget(account);
    this.headerReader.forget(account);
    this.sessionWork.forgetAccount(account);
    this.history.forget(account);
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
    queueMicrotask(this.emitChanged);
  }

  /** One function for every coalesced change (requests signal several changes each). */
  private readonly emitChanged = (): void => {
    this.changePending = false;
    this.events.emit('changed');
  };

  /** The persisted shape at `now` (expired bindings and cooldowns dropped): savedState.ts. */
  toSaved(now: number): SavedRouterState {
    return savedOf(this, now);
  }

  /** Restores a saved state; unknown shapes are ignored (the seed's default: start empty). */
  restore(saved: unknown, now: number): boolean {
    return restoreSaved(this, saved, now);
  }

  /** Replaces snapshots, cooldowns, sign-in flags and bindings by a saved state; leases and counters stay (savedState.ts). */
  replaceWith(saved: unknown, now: number): boolean {
    return replaceWithSaved(this, saved, now);
  }

  /** Folds a state saved by another router into this one without losing either's news (savedState.ts). */
  absorb(saved: unknown, now: number): boolean {
    return absorbSaved(this, saved, now);
  }
}

/** A snapshot that shows a rejected window (5h, 7d, unified or model-scoped, by status or at 100 %). */
function showsRejection(s: QuotaSnapshot): boolean {
  const rejected = (w: { status?: string; utilization?: number } | undefined) => !!w && (isRejectionStatus(w.status) || (w.utilization ?? 0) >= 1);
  return isRejectionStatus(s.unifiedStatus) || rejected(s.session) || rejected(s.weekly) || Object.values(s.scoped ?? {}).some(rejected);
}
