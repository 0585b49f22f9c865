/**
 * Credentials shared by every router of a pool: the pairs live in Redis, sealed (encryption.ts),
 * and this machine's own store (the CLI's credentials.json, the extension's SecretStorage) keeps
 * a copy to serve from while Redis is unreachable.
 *
 * One owner per token refresh (`exclusiveRefresh`): a per-account lock in Redis (SET NX PX with
 * an owner value, released by compare-and-delete); the other routers wait for its release (a
 * notification, or a poll) and then re-read the store, so they adopt the rotated pair instead of
 * sending a spent refresh token. While Redis is unreachable a router refreshes only a pair it
 * rotated itself (it wrote the pair the store held last); the others wait for the store.
 */
import { randomBytes } from 'node:crypto';
import { RefreshError } from '../accounts/oauth';
import type { CredentialStore, Credentials } from '../accounts/types';
import type { StoreConnection, StoreMessage } from './connection';
import { type StoreKey } from './encryption';
import { verifyPoolKey } from './keyCheck';
import { openPair, PairVersions, sealPair } from './pairVersions';
import { storeKeys } from './keys';
import { PairPrints } from './pairPrints';

/** A refresh lock's life, ms: longer than a refresh may take (the token call's 30 s timeout and the writes after it). */
export const REFRESH_LOCK_TTL_MS = 45_000;
/**
 * After the store comes back without an account's pair (an empty Redis restarted), how long the
 * router that wrote the pair last has to upload its copy before another router's may fill the gap, ms.
 */
const OWNER_GRACE_MS = 30_000;
/** Between two looks at a lock another router holds, ms (a release notification ends the wait sooner). */
const LOCK_POLL_MS = 250;

export interface SharedCredentialOptions {
  log: { info(m: string): void; warn(m: string): void };
  /** Where this machine's key comes from, for messages (e.g. the key file's path). */
  keySource: string;
  now?: () => number;
  /** Where the newest version seen of each account's pair is kept (pairVersions.ts), e.g. `<state-dir>/pool-versions.json`; undefined: in memory. */
  versionsFile?: string;
}

/** What this router last saw of an account's record in Redis. */
interface Seen {
  version: string;
  /** The router that wrote it. */
  by: string;
}

export class SharedCredentialStore implements CredentialStore {
  private readonly seen = new Map<string, Seen>();
  /** Prints of the pairs of the local copy (pairPrints.ts). */
  private readonly prints: PairPrints;
  /** Accounts whose newest pair is only in the local copy (written while Redis was unreachable). */
  private readonly dirty = new Set<string>();
  /** Accounts whose refresh lock this router holds now: their pair must come from the pool (refuseStaleUnderLock). */
  private readonly underLock = new Set<string>();
  private readonly releaseWaiters = new Map<string, Set<() => void>>();
  private keyMismatch = false;
  private readonly now: () => number;
  private readonly changeListeners = new Set<(label: string) => void>();
  private readonly reconciling: { now(): Promise<void>; stop(): void };
  /** The newest version of each account's pair this router has seen: an older one in the pool is refused. */
  private readonly versions: PairVersions;

  /**
   * @param local this machine's store: the copy served from while Redis is unreachable
   * @param key the pool's 32-byte key (every machine of the pool holds the same)
   */
  constructor(
    readonly local: CredentialStore,
    private readonly conn: StoreConnection,
    private readonly key: StoreKey,
    private readonly opts: SharedCredentialOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.versions = new PairVersions(opts.versionsFile, opts.log);
    this.prints = new PairPrints(key);
    conn.on('message', this.onMessage);
    this.reconciling = conn.reconcileOnUp('reconciling the shared credentials', () => this.reconcileOnce());
  }

  /** Calls `listener(label)` when another router stored a new pair for `label` (or removed it). @returns a function that stops it */
  onRemoteChange(listener: (label: string) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /**
   * Checks the key against the pool's and uploads pairs written while Redis was away; also run at
   * every (re)connection. Resolves after one attempt, never rejecting: a failed one (a command that
   * timed out, a pair not uploaded) is logged and tried again in the background.
   */
  reconcile(): Promise<void> {
    return this.reconciling.now();
  }

  private async reconcileOnce(): Promise<void> {
    if (!this.conn.up) return;
    if (!(await this.checkKey())) return;
    this.conn.setProblem(null);
    let failed: Error | undefined;
    // The pairs written meanwhile, and those this router stored last (an empty Redis that came back gets them from their owner).
    const owned = [...this.seen].filter(([, s]) => s.by === this.conn.routerId).map(([label]) => label);
    for (const label of new Set([...this.dirty, ...owned])) {
      await this.sync(label).catch((err: Error) => {
        // A pair this key cannot open turns the pool off for credentials (no retry helps); anything else is tried again.
        if (err instanceof SealError) this.mismatch(err.message);
        else failed ??= err;
      });
    }
    if (failed) throw failed;
  }

  /** Whether this machine's key is the pool's (keyCheck.ts); turns the sharing of credentials off, saying why, when it is not. */
  private async checkKey(): Promise<boolean> {
    const verdict = await verifyPoolKey(this.conn, this.key, this.opts.keySource, this.opts.log);
    this.keyMismatch = verdict !== true;
    if (verdict !== true) this.mismatch(verdict);
    return verdict === true;
  }

  async get(label: string): Promise<Credentials | undefined> {
    if (!this.shared()) {
      this.refuseStaleUnderLock(label);
      return this.local.get(label);
    }
    try {
      return await this.sync(label);
    } catch (err) {
      if (err instanceof RefreshError) throw err; // the pool's word: this refresh must wait
      // A pair this key cannot open: the pool is off for credentials until the key is fixed.
      if (err instanceof SealError) this.mismatch(err.message);
      this.refuseStaleUnderLock(label);
      return this.local.get(label); // or lost mid-call (a slow answer too): the local copy
    }
  }

  /**
   * Under the refresh lock the pair to refresh must be the pool's: the local copy may hold a refresh
   * token another router has already spent (a store answer that timed out on a loaded machine sent
   * the soak through two routers there). Only a pair this router rotated last is safe to refresh from.
   * @throws RefreshError('network') otherwise — the refresh is retried later, no spent token is sent
   */
  private refuseStaleUnderLock(label: string): void {
    if (!this.underLock.has(label) || this.seen.get(label)?.by === this.conn.routerId) return;
    throw new RefreshError(
      'network',
      `account ${label}: the state store did not answer while this router held its refresh lock; the refresh waits rather than risk a spent refresh token`,
    );
  }

  async set(label: string, credentials: Credentials): Promise<void> {
    let shared = false;
    if (this.shared()) {
      try {
        await this.write(label, credentials);
        shared = true;
      } catch {
        /* unreachable now: the local copy below, uploaded when it returns */
      }
    }
    if (!shared) this.dirty.add(label);
    try {
      await this.local.set(label, credentials);
      this.prints.noteLocal(label, credentials);
    } catch (err) {
      if (!shared) throw err; // stored nowhere
      this.opts.log.warn(`state store: the local copy of "${label}" was not updated (${(err as Error).message.split('\n')[0]}); the pool holds the pair`);
    }
  }

  async delete(label: string): Promise<void> {
    this.dirty.delete(label);
    if (this.shared()) {
      await this.conn.redis.del(storeKeys.credentials(label));
      this.seen.delete(label);
      this.conn.publish({ k: 't', a: label });
    }
    await this.local.delete(label);
    this.prints.forget(label);
  }

  async labels(): Promise<string[]> {
    const mine = await this.local.labels();
    if (!this.shared()) return mine;
    const prefix = storeKeys.credentials('');
    const theirs: string[] = [];
    try {
      let cursor = '0';
      do {
        const [next, keys] = await this.conn.redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 200);
        cursor = next;
        theirs.push(...keys.map((k) => k.slice(prefix.length)));
      } while (cursor !== '0');
    } catch {
      return mine;
    }
    return [...new Set([...mine, ...theirs])];
  }

  /**
   * The local copy of `label` was changed by someone else (an `accounts` command, a sign-in in
   * this window): when it differs from what this store last synced, it is a new pair and goes
   * to the pool. @returns true when it was news
   */
  async localChanged(label: string): Promise<boolean> {
    const mine = await this.local.get(label);
    // A pair this store put there itself is no news, however late the read that found it: sent up, a spent pair would replace the pool's.
    if (!mine || this.prints.wasLocal(label, mine)) return false;
    // Nor is one the pool has held: another router or window over the same copy (VS Code's windows share SecretStorage) put it there.
    const poolHeld = this.shared() && (await this.prints.poolHeld(this.conn, label, mine).catch(() => false));
    this.prints.noteLocal(label, mine);
    if (poolHeld) return false;
    if (this.shared()) await this.write(label, mine).catch(() => this.dirty.add(label));
    else this.dirty.add(label);
    return true;
  }

  /**
   * Runs `run` (read the store, refresh, store the new pair) as the only refresher of `label` in
   * the pool, waiting while another router holds the account's lock.
   * @throws RefreshError('waiting_for_store') when Redis is unreachable and this router did not rotate the pair last (it waits for the store); RefreshError('network') when another router held the lock past its life
   */
  async exclusiveRefresh<T>(label: string, run: () => Promise<T>): Promise<T> {
    const lock = storeKeys.refreshLock(label);
    const owner = `${this.conn.routerId}:${randomBytes(6).toString('hex')}`;
    const deadline = this.now() + REFRESH_LOCK_TTL_MS + 5_000;
    for (;;) {
      if (!this.shared()) return this.refreshOffline(label, run);
      let got: string | null = null;
      try {
        got = await this.conn.redis.set(lock, owner, 'PX', REFRESH_LOCK_TTL_MS, 'NX');
      } catch {
        // Lost (the loop's first check decides, once the connection says so) or slow: look again after a pause.
      }
      if (got === 'OK') {
        this.underLock.add(label);
        try {
          return await run();
        } finally {
          this.underLock.delete(label);
          await this.conn.redis.crReleaseLock(lock, owner).catch(() => undefined); // else it expires
          this.conn.publish({ k: 'u', a: label });
        }
      }
      if (this.now() > deadline) throw new RefreshError('network', `account ${label}: another router has held its refresh lock for over ${REFRESH_LOCK_TTL_MS / 1000} s`);
      await this.releaseOf(label, LOCK_POLL_MS);
    }
  }

  /** Stops listening to the connection. */
  close(): void {
    this.conn.off('message', this.onMessage);
    this.reconciling.stop();
  }

  /** Turns the sharing of credentials off (this machine's key is not the pool's), says why once. */
  private mismatch(why: string): void {
    const problem = `${why}: copy the key of a machine already on this store (docs/shared-pool.md); until then this router uses its local credentials only`;
    this.keyMismatch = true;
    if (this.conn.status().problem !== problem) this.opts.log.warn(`state store: ${problem}`);
    this.conn.setProblem(problem);
  }

  /** Redis is reachable and this machine's key is the pool's. */
  private shared(): boolean {
    return this.conn.up && !this.keyMismatch;
  }

  private refreshOffline<T>(label: string, run: () => Promise<T>): Promise<T> {
    // The pair the store held last was written by this router: no other one can rotate it.
    if (this.seen.get(label)?.by === this.conn.routerId) return run();
    return Promise.reject(
      new RefreshError('waiting_for_store', `account ${label}: the state store is unreachable and another router rotated its tokens last, so its refresh waits for the store`),
    );
  }

  /**
   * The pool's pair of `label`, reconciled with the local copy: a pair only the local copy holds
   * goes up (unless another writer came first: then the pool's wins); the pool's pair comes down.
   */
  private async sync(label: string): Promise<Credentials | undefined> {
    const key = storeKeys.credentials(label);
    const rec = await this.conn.redis.hgetall(key);
    const opened = rec.blob ? this.unseal(label, rec.blob) : undefined;
    if (opened && opened.version < this.versions.get(label)) {
      // Older than a pair this router has seen: a blob written back (rolled back). Never adopted, never over the local copy.
      this.versions.refused(label, opened.version);
      if (!this.dirty.has(label)) {
        this.refuseStaleUnderLock(label);
        return this.local.get(label);
      }
    }
    const stored = opened && opened.version >= this.versions.get(label) ? opened.creds : undefined;
    if (stored) {
      this.seen.set(label, { version: rec.v, by: rec.by });
      this.versions.note(label, opened!.version);
    }
    if (this.dirty.has(label) || !stored) {
      const mine = await this.local.get(label);
      if (mine && !stored && !this.dirty.has(label) && this.ownerMayReturn(label)) {
        // The pool lost the pair, and another router wrote it last: it may have rotated it since (while the store was
        // away), so this copy is used (its access token) but neither uploaded nor refreshed from until that router had its turn.
        if (this.underLock.has(label))
          throw new RefreshError(
            'waiting_for_store',
            `account ${label}: the state store lost its pair (it restarted empty) and another router stored it last; the refresh waits up to ${OWNER_GRACE_MS / 1000} s for that router's pair rather than risk a spent refresh token`,
          );
        return mine;
      }
      if (mine) {
        const sealedAt = this.versions.next(label, rec.v);
        const version = await this.conn.redis.crWriteCredentials(key, rec.v ?? '', sealPair(this.key, mine, sealedAt, key), this.conn.routerId, this.now(), this.prints.of(mine));
        this.dirty.delete(label);
        if (version >= 0) {
          this.seen.set(label, { version: String(version), by: this.conn.routerId });
          this.versions.note(label, sealedAt);
          this.prints.noteLocal(label, mine);
          this.conn.publish({ k: 't', a: label });
          return mine;
        }
        return this.sync(label); // another writer came first: its pair is the newer
      }
      this.dirty.delete(label);
    }
    if (stored && !this.prints.isLocalNow(label, stored)) {
      // The local copy follows the pool, to serve from if Redis goes away.
      await this.local.set(label, stored).then(
        () => this.prints.noteLocal(label, stored),
        () => undefined,
      );
    }
    return stored;
  }

  /** Writes a pair over whatever the pool holds (a refresh under the lock, or a sign-in), and tells the others. */
  private async write(label: string, credentials: Credentials): Promise<void> {
    const key = storeKeys.credentials(label);
    for (let tries = 0; ; tries++) {
      const current = (await this.conn.redis.hget(key, 'v')) ?? '';
      const sealedAt = this.versions.next(label, current);
      const blob = sealPair(this.key, credentials, sealedAt, key);
      const version = await this.conn.redis.crWriteCredentials(key, current, blob, this.conn.routerId, this.now(), this.prints.of(credentials));
      if (version >= 0) {
        this.seen.set(label, { version: String(version), by: this.conn.routerId });
        this.versions.note(label, sealedAt);
        this.dirty.delete(label);
        this.conn.publish({ k: 't', a: label });
        return;
      }
      if (tries >= 5) throw new Error(`state store: "${label}" kept changing while it was written`);
    }
  }

  private unseal(label: string, blob: string): { creds: Credentials; version: number } {
    try {
      return openPair(this.key, blob, storeKeys.credentials(label));
    } catch (err) {
      throw new SealError(`the pair of "${label}" in the pool cannot be opened with ${this.opts.keySource} (${(err as Error).message})`);
    }
  }

  /** Whether another router wrote the pool's last pair of `label` and the store has been back for less than {@link OWNER_GRACE_MS}. */
  private ownerMayReturn(label: string): boolean {
    const seen = this.seen.get(label);
    const store = this.conn.status();
    return seen !== undefined && seen.by !== this.conn.routerId && store.state === 'connected' && this.now() - store.sinceMs < OWNER_GRACE_MS;
  }

  /** Resolves when the lock of `label` is released (a notification) or after `ms`. */
  private releaseOf(label: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      let waiters = this.releaseWaiters.get(label);
      if (!waiters) this.releaseWaiters.set(label, (waiters = new Set()));
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
    });
  }

  private readonly onMessage = (m: StoreMessage): void => {
    if (typeof m.a !== 'string') return;
    if (m.k === 'u') for (const wake of [...(this.releaseWaiters.get(m.a) ?? [])]) wake();
    if (m.k === 't') for (const listener of this.changeListeners) listener(m.a);
  };
}

/** A pair in the pool that this machine's key cannot open: never silently replaced by the local copy. */
export class SealError extends Error {}
