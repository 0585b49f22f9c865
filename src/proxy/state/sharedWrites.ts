/**
 * Read-merge-write of the shared values (sharedState.ts) as compare-and-set: the router reads a
 * value, keeps it only when it is signed by the pool and within bounds (sharedValues.ts), merges
 * its own in by the value's rule, and writes the signed result only when the store still holds
 * what it read (src/store/scripts.ts `SWAP_FIELD`, `SWAP_KEY`), trying again otherwise. So an
 * unsigned or forged value never wins a merge: the next write of its owner replaces it.
 */
import type { StoreConnection } from '../../store/connection';
import { storeKeys } from '../../store/keys';
import { mergeCooldown } from '../../quota/cooldown';
import type { Cooldown, QuotaSnapshot } from '../../quota/types';
import type { SavedLearnedCosts } from '../../quota/learnedCosts';
import { bindingOf, cooldownOf, evidenceOf, learnersOf } from './sharedValues';

/** How often a write is tried again when another router wrote the same value meanwhile. */
const TRIES = 5;

/** The name a hash field's value is signed under: the hash and the field (hash names hold no newline). */
export function fieldName(hash: string, field: string): string {
  return `${hash}\n${field}`;
}

/** What one merge did. */
export interface Swapped<T> {
  /** The merge wrote (or deleted) the value. */
  wrote: boolean;
  /** The value the store holds afterwards, as far as this router knows (undefined: none, or one it does not accept). */
  stored: T | undefined;
}

/** How to read and merge one kind of value. */
export interface Merge<T> {
  /** The kind, for the log (e.g. "a cooldown"). */
  what: string;
  /** The value when it is one (shape and bounds), else undefined. */
  read(v: unknown): T | undefined;
  /** What to store given the accepted value there (undefined: none): a value, null to delete, undefined to keep what is there. */
  next(old: T | undefined): T | null | undefined;
}

/**
 * Merges into the field `field` of the hash `hash` by `merge`.
 * @throws what the store throws (unreachable, timeout); Error when the field kept changing
 */
export async function swapField<T>(conn: StoreConnection, hash: string, field: string, merge: Merge<T>): Promise<Swapped<T>> {
  const name = fieldName(hash, field);
  for (let tries = 0; tries < TRIES; tries++) {
    const raw = await conn.redis.hget(hash, field);
    const old = readSigned(conn, name, raw, merge);
    const next = merge.next(old);
    if (next === undefined && (raw === null || old !== undefined)) return { wrote: false, stored: old };
    // A value this router does not accept is replaced by its own, or dropped when it has none.
    const text = next === undefined || next === null ? '' : conn.signed(name, next);
    if ((await conn.redis.crSwapField(hash, field, raw === null ? '0' : '1', raw ?? '', text)) === 1) return { wrote: true, stored: next ?? undefined };
  }
  throw new Error(`${hash} ${field} kept changing while it was written`);
}

/**
 * Merges into the key `key` (a value that expires after `ttlMs`) by `merge`; `next` returning null keeps what is there.
 * @throws as {@link swapField}
 */
export async function swapKey<T>(conn: StoreConnection, key: string, ttlMs: number, merge: Merge<T>): Promise<Swapped<T>> {
  for (let tries = 0; tries < TRIES; tries++) {
    const raw = await conn.redis.get(key);
    const old = readSigned(conn, key, raw, merge);
    const next = merge.next(old);
    if (next === undefined || next === null) return { wrote: false, stored: old };
    if ((await conn.redis.crSwapKey(key, raw === null ? '0' : '1', raw ?? '', conn.signed(key, next), ttlMs)) === 1) return { wrote: true, stored: next };
  }
  throw new Error(`${key} kept changing while it was written`);
}

/** The value `raw` holds under `name` when it is signed by the pool and `merge` accepts it (refusals logged once). */
export function readSigned<T>(conn: StoreConnection, name: string, raw: string | null | undefined, merge: Pick<Merge<T>, 'what' | 'read'>): T | undefined {
  const got = conn.verified(name, raw, merge.what);
  if (!got) return undefined;
  const value = merge.read(got.value);
  if (value === undefined) conn.refuse(merge.what, name, 'out of bounds (a shape or time no router writes)');
  return value;
}

/**
 * The merges of the shared values (the rules of sharedState.ts's head), each reading with the clock `now` (epoch ms).
 * Every one rejects as {@link swapField} does.
 */
export function sharedMerges(conn: StoreConnection, now: () => number) {
  const cooldown = (v: unknown) => cooldownOf(v, now());
  return {
    /** An account's quota evidence, unless the stored one was observed later. */
    evidence: (account: string, snap: QuotaSnapshot) =>
      swapField(conn, storeKeys.evidence, account, {
        what: 'quota evidence',
        read: (v) => evidenceOf(v, now()),
        next: (old) => (old && old.observedAtMs > snap.observedAtMs ? undefined : snap),
      }),
    /** A cooldown merged with the stored one (never shortened); resolves with the cooldown the store holds afterwards. */
    cooldown: async (field: string, c: Cooldown): Promise<Cooldown> =>
      (await swapField(conn, storeKeys.cooldowns, field, { what: 'a cooldown', read: cooldown, next: (old) => mergeCooldown(old, c) })).stored ?? c,
    /** Lifts the cooldown of `field` unless a later-ending one was set meanwhile (by this router or another). */
    lift: (field: string, untilMs: number) =>
      swapField(conn, storeKeys.cooldowns, field, { what: 'a cooldown', read: cooldown, next: (old) => (old && old.untilMs > untilMs ? undefined : null) }),
    /** A binding, unless the stored one was served later; its key expires `ttlMs` after that serving. */
    binding: (session: string, account: string, at: number, ttlMs: number) =>
      swapKey(conn, storeKeys.binding(session), ttlMs, {
        what: 'a session binding',
        read: (v) => bindingOf(v, now()),
        next: (old) => (old && old.lastServedAtMs > at ? null : { account, lastServedAtMs: at }),
      }),
    /** An account's learners: per window, the copy with more samples (`n`) wins. */
    learners: (account: string, mine: SavedLearnedCosts[string]) =>
      swapField(conn, storeKeys.learnedCosts, account, {
        what: 'learned costs',
        read: (v) => learnersOf(v, now()),
        next: (old) => {
          const out = { ...mine };
          for (const [k, w] of Object.entries(old ?? {})) if (!out[k] || w.n > out[k].n) out[k] = w;
          return out;
        },
      }),
  };
}
