/**
 * Access tokens for every account, with single-flight refresh.
 *
 * Rules (anthropic-wire.md §5): one refresh in flight per account, shared by
 * every caller; re-read the store before refreshing and adopt a newer token;
 * persist the new pair before any waiter uses it; keep the old refresh token
 * when none is returned; `invalid_grant` on a superseded token is a race, not
 * a dead account. A failed refresh never deletes a stored credential.
 */
import type { CredentialStore, Credentials } from './types';
import { RefreshError, type TokenRefresher } from './oauth';

/** Refresh proactively when the token expires within this long (ms). */
export const REFRESH_SKEW_MS = 5 * 60_000;
/** After a failed proactive refresh, wait this long before the next one (ms). */
export const REFRESH_BACKOFF_MS = 60_000;

export class TokenManager {
  private readonly refreshing = new Map<string, Promise<Credentials>>();
  /** Last credentials seen per account; the hot path reads this, refreshes re-read the store. */
  private readonly cache = new Map<string, Credentials>();
  /** When the last proactive refresh of an account failed, epoch ms. */
  private readonly failedAt = new Map<string, number>();

  constructor(
    private readonly store: CredentialStore,
    private readonly refresher: TokenRefresher,
    private readonly now: () => number = Date.now,
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
    let stored = this.cache.get(label);
    if (!stored) {
      stored = await this.store.get(label);
      if (stored) this.cache.set(label, stored);
    }
    if (!stored) throw new RefreshError('no_refresh_token', `account ${label} has no credentials`);
    const now = this.now();
    if (lastsBeyondSkew(stored, now)) return stored;
    if (stored.expiresAtMs! <= now) return this.refresh(label, stored.accessToken); // defined: lastsBeyondSkew was false
    if (now - (this.failedAt.get(label) ?? -Infinity) >= REFRESH_BACKOFF_MS) {
      this.refresh(label, stored.accessToken).then(
        () => this.failedAt.delete(label),
        () => this.failedAt.set(label, this.now()),
      );
    }
    return stored;
  }

  /**
   * The credentials `current` would resolve to at once — cached and not due for a refresh —
   * without a promise (the common case on the request path); undefined when `current` has
   * work to do (not cached yet, expiring or expired).
   */
  ready(label: string): Credentials | undefined {
    const stored = this.cache.get(label);
    return stored && lastsBeyondSkew(stored, this.now()) ? stored : undefined;
  }

  /**
   * Refreshes after `rejectedAccessToken` was refused (or is expiring).
   * Concurrent callers share one refresh. Resolves to credentials whose access
   * token differs from the rejected one.
   * @throws RefreshError — `invalid_grant` / `no_refresh_token` mean a person must sign in again
   */
  refresh(label: string, rejectedAccessToken: string): Promise<Credentials> {
    const pending = this.refreshing.get(label);
    if (pending) return pending;
    const run = this.doRefresh(label, rejectedAccessToken)
      .then((c) => {
        this.cache.set(label, c);
        return c;
      })
      .finally(() => this.refreshing.delete(label));
    this.refreshing.set(label, run);
    return run;
  }

  /** Forgets the cached credentials of one account (or all): the store changed underneath. */
  invalidate(label?: string): void {
    if (label === undefined) this.cache.clear();
    else this.cache.delete(label);
  }

  private async doRefresh(label: string, rejectedAccessToken: string): Promise<Credentials> {
    const stored = await this.store.get(label);
    if (!stored) throw new RefreshError('no_refresh_token', `account ${label} has no credentials`);
    // Someone (another request, window or process) already rotated it: adopt theirs.
    if (stored.accessToken !== rejectedAccessToken) return stored;
    if (!stored.refreshToken) throw new RefreshError('no_refresh_token', `account ${label} has no refresh token`);
    let grant;
    try {
      grant = await this.refresher(stored.refreshToken);
    } catch (err) {
      if (err instanceof RefreshError && err.failure === 'invalid_grant') {
        const latest = await this.store.get(label);
        if (latest && latest.refreshToken !== stored.refreshToken) return latest; // lost a race, not dead
      }
      throw err;
    }
    // The account may have been removed, or signed in again, while the refresh ran: never
    // bring back a deleted token or overwrite newer credentials with this older lineage.
    const latest = await this.store.get(label);
    if (!latest) throw new RefreshError('no_refresh_token', `account ${label} was removed`);
    if (latest.refreshToken !== stored.refreshToken || latest.accessToken !== stored.accessToken) return latest;
    const next: Credentials = {
      ...stored,
      accessToken: grant.accessToken,
      refreshToken: grant.refreshToken ?? stored.refreshToken,
      expiresAtMs: grant.expiresAtMs,
    };
    await this.store.set(label, next);
    return next;
  }
}

/** Needs no refresh at `now`: no refresh token to use, no known expiry, or more than REFRESH_SKEW_MS left. */
function lastsBeyondSkew(c: Credentials, now: number): boolean {
  return !c.refreshToken || c.expiresAtMs === undefined || c.expiresAtMs - now >= REFRESH_SKEW_MS;
}
