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
import { createHmac, randomBytes } from 'node:crypto';
import { RefreshError } from '../accounts/oauth';
import type { CredentialStore, Credentials } from '../accounts/types';
import type { StoreConnection, StoreMessage } from './connection';
import { keyCheck, open, type StoreKey } from './encryption';
import { openPair, PairVersions, sealPair } from './pairVersions';
import { storeKeys } from './keys';
import { PAIR_PRINT_CHARS } from './scripts';

/** A refresh lock's life, ms: longer than a refresh may take (the token call's 30 s timeout and the writes after it). */
export const REFRESH_LOCK_TTL_MS = 45_000;
/**
 * After the store comes back without an account's pair (an empty Redis restarted), how long the
 * router that wrote the pair last has to upload its copy before another router's may fill the gap, ms.
 */
const OWNER_GRACE_MS = 30_000;
/** Fingerprints of the local copy's past pairs kept per account (see `localPrints`): more than rotations in one slow file read. */
const LOCAL_PRINTS_MAX = 16;
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
  /**
   * Per account, the prints (`print`) of the pairs this store wrote to, or read from, the local copy,
   * oldest first (at most {@link LOCAL_PRINTS_MAX}): the last is the local copy now; any of them read
   * back later (a slow read of a file since rewritten) is no news.
   */
  private readonly localPrints = new Map<string, string[]>();
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
  /** `label NUL version` of the older pairs refused so far (each is logged once). */
  private readonly refusedOlder = new Set<string>();

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

  /**
   * Whether this machine's key is the pool's: the key check in Redis (keyCheck: an HMAC of the key)
   * is this key's, or — when it is not — a sealed pair of the pool opens with this key, which proves
   * the check record was not written with the pool's key (it is rewritten). Turns the sharing of
   * credentials off, saying which, otherwise.
   */
  private async checkKey(): Promise<boolean> {
    const check = keyCheck(this.key);
    const redis = this.conn.redis;
    await redis.set(storeKeys.keyCheck, check, 'NX');
    const stored = await redis.get(storeKeys.keyCheck);
    this.keyMismatch = stored !== check;
    if (!this.keyMismatch) return true;
    const proof = await this.poolPairsOpen();
    if (proof === 'open') {
      this.keyMismatch = false;
      await redis.set(storeKeys.keyCheck, check);
      this.opts.log.warn(
        `state store: the key check record in Redis (${storeKeys.keyCheck}) is not authentic: it was not written with the pool's key (${this.opts.keySource} opens the pool's tokens), so someone with write access to Redis altered it; this router rewrote it and keeps sharing credentials (docs/security.md#the-shared-store)`,
      );
      return true;
    }
    if (proof === 'closed') this.mismatch(`the pool's tokens are sealed with another key than ${this.opts.keySource}`);
    else
      this.mismatch(
        `the key check record in Redis (${storeKeys.keyCheck}) does not match ${this.opts.keySource}, and the pool holds no token to tell whether the pool uses another key or the record is not authentic (altered by someone without the key; then delete it)`,
      );
    return false;
  }

  /** Whether the pool's sealed pairs open with this key: `open` when one does, `closed` when some exist and none does, `none` without any. */
  private async poolPairsOpen(): Promise<'open' | 'closed' | 'none'> {
    const prefix = storeKeys.credentials('');
    const [, keys] = await this.conn.redis.scan('0', 'MATCH', `${prefix}*`, 'COUNT', 1000);
    let found = false;
    for (const key of keys.slice(0, 20)) {
      const blob = await this.conn.redis.hget(key, 'blob');
      if (!blob) continue;
      found = true;
      try {
        open(this.key, blob, key);
        return 'open';
      } catch {
        /* another key's, or no sealed pair */
      }
    }
    return found ? 'closed' : 'none';
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
      this.noteLocal(label, credentials);
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
    this.localPrints.delete(label);
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
    if (!mine || this.localPrints.get(label)?.includes(this.print(mine))) return false;
    // Nor is one the pool has held: another router or window over the same copy (VS Code's windows share SecretStorage) put it there.
    const poolHeld = this.shared() && (await this.poolHeld(label, mine).catch(() => false));
    this.noteLocal(label, mine);
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
      this.refuseOlder(label, opened.version);
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
        const sealedAt = this.nextVersion(label, rec.v);
        const version = await this.conn.redis.crWriteCredentials(key, rec.v ?? '', sealPair(this.key, mine, sealedAt, key), this.conn.routerId, this.now(), this.print(mine));
        this.dirty.delete(label);
        if (version >= 0) {
          this.seen.set(label, { version: String(version), by: this.conn.routerId });
          this.versions.note(label, sealedAt);
          this.noteLocal(label, mine);
          this.conn.publish({ k: 't', a: label });
          return mine;
        }
        return this.sync(label); // another writer came first: its pair is the newer
      }
      this.dirty.delete(label);
    }
    if (stored && this.localPrints.get(label)?.at(-1) !== this.print(stored)) {
      // The local copy follows the pool, to serve from if Redis goes away.
      await this.local.set(label, stored).then(
        () => this.noteLocal(label, stored),
        () => undefined,
      );
    }
    return stored;
  }

  /** Whether the pool has held `creds` for `label` (its print is in the credentials hash's `seen`). */
  private async poolHeld(label: string, creds: Credentials): Promise<boolean> {
    const seen = (await this.conn.redis.hget(storeKeys.credentials(label), 'seen')) ?? '';
    const print = this.print(creds);
    for (let i = 0; i + PAIR_PRINT_CHARS <= seen.length; i += PAIR_PRINT_CHARS) if (seen.startsWith(print, i)) return true;
    return false;
  }

  /**
   * A pair's print (never the pair): what the local copy held (`localPrints`) and the pool has held
   * (`seen`); keyed by the pool's key, so Redis alone learns nothing of the tokens from it.
   */
  private print(c: Credentials): string {
    return createHmac('sha256', this.key)
      .update(`${c.accessToken}\n${c.refreshToken ?? ''}\n${c.expiresAtMs ?? ''}`)
      .digest('hex')
      .slice(0, PAIR_PRINT_CHARS);
  }

  /** Remembers `creds` as the local copy of `label` now (written or read by this store). */
  private noteLocal(label: string, creds: Credentials): void {
    const prints = this.localPrints.get(label) ?? [];
    const print = this.print(creds);
    if (prints.at(-1) !== print) prints.push(print);
    if (prints.length > LOCAL_PRINTS_MAX) prints.shift();
    this.localPrints.set(label, prints);
  }

  /** Writes a pair over whatever the pool holds (a refresh under the lock, or a sign-in), and tells the others. */
  private async write(label: string, credentials: Credentials): Promise<void> {
    const key = storeKeys.credentials(label);
    for (let tries = 0; ; tries++) {
      const current = (await this.conn.redis.hget(key, 'v')) ?? '';
      const sealedAt = this.nextVersion(label, current);
      const blob = sealPair(this.key, credentials, sealedAt, key);
      const version = await this.conn.redis.crWriteCredentials(key, current, blob, this.conn.routerId, this.now(), this.print(credentials));
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

  /**
   * The version a new pair of `label` is sealed at: after the hash's `v` (which Redis alone could lower)
   * and after every version this router has seen, so no router that saw the old pair refuses it.
   */
  private nextVersion(label: string, stored: string | undefined): number {
    const v = Number(stored || 0);
    return Math.max(Number.isSafeInteger(v) ? v + 1 : 1, this.versions.get(label) + 1);
  }

  /** Says once per account and version that the pool's pair was refused as older than one seen. */
  private refuseOlder(label: string, version: number): void {
    const key = `${label}\0${version}`;
    if (this.refusedOlder.has(key)) return;
    this.refusedOlder.add(key);
    this.opts.log.warn(
      `state store: refused the pool's pair of "${label}": it is version ${version}, older than version ${this.versions.get(label)} this router has seen (an old pair written back into Redis); this router keeps its own copy and never sends that pair's refresh token`,
    );
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
