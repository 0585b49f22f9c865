/**
 * Access tokens for every account, with single-flight refresh.
 *
 * Rules (docs/anthropic-api.md#refresh-rules): at most one refresh runs for an account at a time
 * and every caller awaits that one; the store is read again before refreshing, and a newer pair
 * found there is used instead;
 * try to persist the new pair before any waiter uses it; keep the old refresh
 * token when none is returned; `invalid_grant` on a superseded token is a race,
 * not a dead account. A failed refresh never deletes a stored credential.
 *
 * Once the token endpoint has rotated a pair, the old refresh token is spent and
 * the new pair may exist nowhere but here. So the pair we hold stays authoritative
 * over a stored pair we held before and rotated away (see `isStale`): a save that
 * failed is retried (SAVE_RETRY_MIN_MS doubling to SAVE_RETRY_MAX_MS) while the pair
 * is used, and such a pair written back by a stale writer (another process or window)
 * is never adopted, so the next refresh always uses the newest refresh token we hold.
 * A pair we never held — a sign-in, an import, another process's rotation — is adopted.
 */
import type { CredentialStore, Credentials } from './types';
import { RefreshError, type TokenRefresher } from './oauth';

/** Refresh proactively when the token expires within this long (ms). */
export const REFRESH_SKEW_MS = 5 * 60_000;
/** After a failed proactive refresh, wait this long before the next one (ms). */
export const REFRESH_BACKOFF_MS = 60_000;
/** First retry of a rotated pair whose save failed (ms); each further retry waits twice as long. */
export const SAVE_RETRY_MIN_MS = 1_000;
/** Longest wait between two retries of a failed save (ms). */
export const SAVE_RETRY_MAX_MS = 60_000;
/** Refresh tokens remembered per account (a day of rotations and more): a stored pair carrying one of them is stale. */
const LINEAGE_MAX = 32;

/** One failed attempt to store a rotated pair. The pair is in use from memory; the save is retried. */
export interface SaveFailure {
  label: string;
  /** Failed attempts so far for this pair, from 1. */
  attempt: number;
  /** The store's error, token-free: its message, first line, with anything shaped like a token cut. */
  reason: string;
  /** Time until the next attempt, ms (a refresh before then stores its newer pair itself). */
  retryInMs: number;
}

/** What a TokenManager reports to its owner, which logs it (it never receives token text). */
export interface TokenManagerEvents {
  /** Each failed attempt to store a rotated pair. */
  saveFailed?(failure: SaveFailure): void;
  /** A pair whose save had failed `failedAttempts` times is stored now. */
  saved?(label: string, failedAttempts: number): void;
}

export class TokenManager {
  private readonly refreshing = new Map<string, Promise<Credentials>>();
  /** The newest pair we hold per account: the hot path reads this, refreshes reconcile it with the store. */
  private readonly held = new Map<string, Credentials>();
  /** The refresh tokens each account's held pairs carried, oldest first (at most LINEAGE_MAX): see `isStale`. */
  private readonly lineage = new Map<string, string[]>();
  /** Accounts whose held pair is checked against the store before its next use (`invalidate`). */
  private readonly recheck = new Set<string>();
  /** Accounts whose held pair is not stored yet: failed attempts and the pending retry. */
  private readonly unsaved = new Map<string, { attempts: number; timer?: NodeJS.Timeout }>();
  /** When the last proactive refresh of an account failed, epoch ms. */
  private readonly failedAt = new Map<string, number>();
  /** Each account's grant time as last read or held (`Credentials.grantedAtMs`): epoch ms, null when unknown. */
  private readonly grants = new Map<string, number | null>();

  /**
   * @param store where pairs are kept; it may reject (full disk, locked file): see `events.saveFailed`
   * @param now clock, epoch ms
   * @param events failed and recovered saves, for the owner's log
   */
  constructor(
    private readonly store: CredentialStore,
    private readonly refresher: TokenRefresher,
    private readonly now: () => number = Date.now,
    private readonly events: TokenManagerEvents = {},
  ) {}

  /**
   * The credentials to use for a request now. A token that expires within
   * REFRESH_SKEW_MS but is still valid is used at once while a refresh runs in
   * the background (a slow token endpoint never delays a request that does not
   * need it); only an already expired token waits for the refresh. After a
   * failed background refresh the next one waits REFRESH_BACKOFF_MS.
   * @throws RefreshError('no_refresh_token') when the account has no credentials at all
   */
  async current(label: string): Promise<Credentials> {
    const creds = this.checked(label) ?? this.reconcile(label, await this.read(label));
    const now = this.now();
    if (lastsBeyondSkew(creds, now)) return creds;
    if (creds.expiresAtMs! <= now) return this.refresh(label, creds.accessToken); // defined: lastsBeyondSkew was false
    if (now - (this.failedAt.get(label) ?? -Infinity) >= REFRESH_BACKOFF_MS) {
      this.refresh(label, creds.accessToken).then(
        () => this.failedAt.delete(label),
        () => this.failedAt.set(label, this.now()),
      );
    }
    return creds;
  }

  /**
   * The stored credentials of `label`.
   * @throws RefreshError('store_unreadable') naming the store's problem when it cannot be read
   */
  private async read(label: string): Promise<Credentials | undefined> {
    try {
      return await this.store.get(label);
    } catch (err) {
      throw new RefreshError('store_unreadable', tokenFree(err));
    }
  }

  /**
   * The credentials `current` would resolve to at once — held, checked and not due for a
   * refresh — without a promise (the common case on the request path); undefined when
   * `current` has work to do (not read yet, to be rechecked, expiring or expired).
   */
  ready(label: string): Credentials | undefined {
    const held = this.checked(label);
    return held && lastsBeyondSkew(held, this.now()) ? held : undefined;
  }

  /**
   * True when `accessToken` is the newest access token known for `label`: the pair held, with no
   * newer one announced by the store (`invalidate`) nor a refresh under way. A refusal of any other
   * token says nothing about the account: it was overtaken.
   */
  holds(label: string, accessToken: string): boolean {
    return !this.refreshing.has(label) && this.checked(label)?.accessToken === accessToken;
  }

  /** The held pair, unless the store must be checked first (`invalidate`). */
  private checked(label: string): Credentials | undefined {
    return this.recheck.has(label) ? undefined : this.held.get(label);
  }

  /**
   * Refreshes after `rejectedAccessToken` was refused (or is expiring).
   * Concurrent callers share one refresh. Resolves to credentials whose access
   * token differs from the rejected one; a rotated pair that could not be stored
   * still resolves (it is held and its save retried, see `events.saveFailed`).
   * @throws RefreshError — `invalid_grant` / `no_refresh_token` mean a person must sign in again
   */
  refresh(label: string, rejectedAccessToken: string): Promise<Credentials> {
    const pending = this.refreshing.get(label);
    // A refresh under way may end in the very token this caller saw refused: then it needs one of its own.
    if (pending) return pending.then((c) => (c.accessToken === rejectedAccessToken ? this.refresh(label, rejectedAccessToken) : c));
    // A store shared by several routers lets one of them refresh at a time; inside, doRefresh re-reads the pair first.
    const refresh = () => this.doRefresh(label, rejectedAccessToken);
    const run = (this.store.exclusiveRefresh ? this.store.exclusiveRefresh(label, refresh) : refresh()).finally(() => this.refreshing.delete(label));
    this.refreshing.set(label, run);
    return run;
  }

  /**
   * The store changed underneath (one account, or all): check it before the next use. The
   * held pairs are kept, so a stale pair in the store never replaces a newer one held here.
   * The grant times are read again at once (a sign-in starts a new grant: `grantedAt`).
   */
  invalidate(label?: string): void {
    if (label !== undefined) this.recheck.add(label);
    else for (const l of this.held.keys()) this.recheck.add(l);
    void this.readGrants(label !== undefined ? [label] : [...new Set([...this.held.keys(), ...this.grants.keys()])]);
  }

  /**
   * When the grant of `label`'s pair was made (its sign-in), epoch ms: null when unknown (an
   * imported token, credentials stored before grant times were), undefined when not read yet
   * (`readGrants`). A refresh never changes it.
   */
  grantedAt(label: string): number | null | undefined {
    return this.grants.get(label);
  }

  /**
   * Reads the grant times of `labels` from the store, without touching the pairs used (so
   * `status` shows them before an account's first request). A read that fails leaves what was known.
   */
  async readGrants(labels: readonly string[]): Promise<void> {
    await Promise.all(
      labels.map(async (label) => {
        let stored: Credentials | undefined;
        try {
          stored = await this.store.get(label);
        } catch {
          return;
        }
        if (stored) this.grants.set(label, grantOf(stored));
        else this.grants.delete(label);
      }),
    );
  }

  private async doRefresh(label: string, rejectedAccessToken: string): Promise<Credentials> {
    const base = this.reconcile(label, await this.store.get(label));
    // Someone (another request, window or process) already rotated it, or we hold a newer pair
    // than the rejected one: use that.
    if (base.accessToken !== rejectedAccessToken) return base;
    if (!base.refreshToken) throw new RefreshError('no_refresh_token', `account ${label} has no refresh token`);
    let grant;
    try {
      grant = await this.refresher(base.refreshToken);
    } catch (err) {
      if (err instanceof RefreshError && err.failure === 'invalid_grant') {
        // Lost a race (another process rotated it), or ours is dead and the store's pair is all that is left.
        const latest = await this.store.get(label);
        if (latest && latest.refreshToken !== base.refreshToken) return this.adopt(label, latest);
      }
      throw err;
    }
    const next: Credentials = {
      ...base,
      accessToken: grant.accessToken,
      refreshToken: grant.refreshToken ?? base.refreshToken,
      expiresAtMs: grant.expiresAtMs,
    };
    // Held at once: base's refresh token is spent, so `next` must outlive whatever fails below.
    this.hold(label, next);
    // The account may have been removed, or signed in again, while the refresh ran: never
    // bring back a deleted token or overwrite a sign-in with this lineage.
    let latest: Credentials | undefined;
    try {
      latest = await this.store.get(label);
    } catch (err) {
      this.saveFailed(label, err); // unread, so unsaved: the retry reads again before it writes
      return next;
    }
    if (!latest) {
      this.forget(label);
      throw new RefreshError('no_refresh_token', `account ${label} was removed`);
    }
    const changed = latest.refreshToken !== base.refreshToken || latest.accessToken !== base.accessToken;
    if (changed && !this.isStale(label, latest, next)) return this.adopt(label, latest);
    await this.save(label, next);
    return next;
  }

  /**
   * The pair to use, given what the store holds now: ours when the store's is stale
   * (a save is pending, or a stale writer put an old pair back), else the store's.
   * @throws RefreshError('no_refresh_token') when the store has nothing: the account was removed
   */
  private reconcile(label: string, stored: Credentials | undefined): Credentials {
    if (!stored) {
      this.forget(label);
      throw new RefreshError('no_refresh_token', `account ${label} has no credentials`);
    }
    const held = this.held.get(label);
    if (held && this.isStale(label, stored, held)) {
      this.recheck.delete(label);
      return held;
    }
    return this.adopt(label, stored);
  }

  /**
   * Whether `stored` is a pair we held and have since rotated away — put back by a stale writer,
   * or still there because our save is pending: its refresh token is one our held pairs carried,
   * and it is not the pair held now. A refresh token we never held (a sign-in, an import,
   * another process's rotation) is never stale, whatever the clocks say; nor is anything when
   * the held pair has no refresh token (API keys, long-lived tokens): the store wins, as it always did.
   */
  private isStale(label: string, stored: Credentials, held: Credentials): boolean {
    if (!held.refreshToken || stored.refreshToken === undefined) return false;
    if (stored.refreshToken === held.refreshToken && stored.accessToken === held.accessToken) return false;
    return this.lineage.get(label)?.includes(stored.refreshToken) ?? false;
  }

  /** Makes `creds` the pair used for `label`, and remembers its refresh token as ours. */
  private hold(label: string, creds: Credentials): void {
    this.held.set(label, creds);
    this.grants.set(label, grantOf(creds));
    if (!creds.refreshToken) return;
    const seen = this.lineage.get(label) ?? [];
    if (seen.at(-1) !== creds.refreshToken) seen.push(creds.refreshToken);
    if (seen.length > LINEAGE_MAX) seen.shift();
    this.lineage.set(label, seen);
  }

  /** Takes the store's pair as the newest: a pending save of an older pair of ours is dropped. */
  private adopt(label: string, stored: Credentials): Credentials {
    this.hold(label, stored);
    this.recheck.delete(label);
    this.settle(label);
    return stored;
  }

  /** The account is gone from the store (removed by a person): hold nothing for it. */
  private forget(label: string): void {
    this.held.delete(label);
    this.grants.delete(label);
    this.lineage.delete(label);
    this.recheck.delete(label);
    this.settle(label);
  }

  /** No save of this account is pending any more. */
  private settle(label: string): void {
    clearTimeout(this.unsaved.get(label)?.timer);
    this.unsaved.delete(label);
  }

  /** Stores a held pair; never rejects: a failure is reported and retried with backoff. */
  private async save(label: string, creds: Credentials): Promise<void> {
    try {
      await this.store.set(label, creds);
    } catch (err) {
      // A pair superseded while its save ran is not retried: the newer one is saved on its own.
      if (this.held.get(label) === creds) this.saveFailed(label, err);
      return;
    }
    const entry = this.unsaved.get(label);
    if (entry && this.held.get(label) === creds) {
      this.settle(label);
      this.events.saved?.(label, entry.attempts);
    }
  }

  private saveFailed(label: string, err: unknown): void {
    const entry = this.unsaved.get(label) ?? { attempts: 0 };
    entry.attempts++;
    const retryInMs = Math.min(SAVE_RETRY_MIN_MS * 2 ** (entry.attempts - 1), SAVE_RETRY_MAX_MS);
    clearTimeout(entry.timer);
    // Unref'd: a pending retry never keeps a CLI process alive (the held pair dies with it anyway).
    // It outlives its owner's close on purpose (the extension leaving real mode): it holds the
    // only copy of a valid pair, and storing it later beats dropping it.
    entry.timer = setTimeout(() => void this.retrySave(label), retryInMs).unref();
    this.unsaved.set(label, entry);
    this.events.saveFailed?.({ label, attempt: entry.attempts, reason: tokenFree(err), retryInMs });
  }

  private async retrySave(label: string): Promise<void> {
    // A refresh in flight stores a newer pair itself; wait for it so an older pair never lands last.
    await this.refreshing.get(label)?.catch(() => undefined);
    if (!this.unsaved.has(label)) return;
    let stored: Credentials | undefined;
    try {
      stored = await this.store.get(label);
    } catch (err) {
      return this.saveFailed(label, err);
    }
    if (!stored) return this.forget(label); // removed by a person meanwhile
    // A sign-in stored meanwhile is newer than our pair: reconcile adopts it rather than overwrite it.
    const creds = this.reconcile(label, stored);
    if (this.unsaved.has(label)) await this.save(label, creds);
  }
}

/** A pair's grant time: epoch ms, or null when it has none (or not a number: a hand-edited file). */
function grantOf(c: Credentials): number | null {
  return typeof c.grantedAtMs === 'number' && Number.isFinite(c.grantedAtMs) ? c.grantedAtMs : null;
}

/** Needs no refresh at `now`: no refresh token to use, no known expiry, or more than REFRESH_SKEW_MS left. */
function lastsBeyondSkew(c: Credentials, now: number): boolean {
  return !c.refreshToken || c.expiresAtMs === undefined || c.expiresAtMs - now >= REFRESH_SKEW_MS;
}

/** A store error for a log line: its first line, with anything shaped like a token cut (stores never put one there, but a log is no place to trust that). */
function tokenFree(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0].replace(/sk-ant-[A-Za-z0-9_-]+/g, 'sk-ant-***');
}
