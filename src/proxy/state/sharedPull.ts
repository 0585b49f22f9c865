/**
 * The reading side of a shared pool (docs/shared-pool.md): what sharedState.ts takes from the
 * store and folds into this router's RouterState (through peerState.ts) — another router's
 * notification, the pool's hashes and session bindings at a reconciliation, and the others'
 * in-flight records. Every value is checked against its signature, shape and bounds
 * (sharedValues.ts) before it counts.
 */
import type { StoreConnection, StoreMessage } from '../../store/connection';
import { storeKeys } from '../../store/keys';
import type { LearnedLimit } from '../../routing/concurrencyLimit';
import type { Cooldown, QuotaSnapshot } from '../../quota/types';
import type { TokensByKind } from '../../quota/learnedCosts';
import type { RemoteLoad } from './leases';
import type { RouterState } from './routerState';
import { absorbBinding, absorbCooldown, absorbEvidence, absorbLearnedCosts, absorbLimit, absorbLift, absorbReset, absorbServed } from './peerState';
import { addCost, bindingOf, cooldownOf, evidenceOf, inflightOf, isEpochMs, isSessionHash, labelSchema, learnersOf, limitOf, tokensOf } from './sharedValues';
import { fieldName, readSigned, type sharedMerges } from './sharedWrites';

/** The store's merges (sharedWrites.ts). */
type SharedMerges = ReturnType<typeof sharedMerges>;

/**
 * Another router's notification, folded into `state` when its fields are within bounds (the
 * connection checked its signature). An in-flight notice (`i`) calls `onInflight`: the others'
 * records are re-read, not carried in the message.
 * @param t now, epoch ms
 */
export function foldMessage(state: RouterState, m: StoreMessage, t: number, onInflight: () => void): void {
  const account = labelSchema.safeParse(m.a).success ? (m.a as string) : undefined;
  const family = typeof m.f === 'string' && m.f.length <= 64 ? m.f : null;
  let v: unknown;
  switch (m.k) {
    case 'e':
      if (account && (v = evidenceOf(m.v, t))) absorbEvidence(state, account, v as QuotaSnapshot);
      break;
    case 'c':
      if (account && (v = cooldownOf(m.c, t))) absorbCooldown(state, account, family, v as Cooldown, t);
      break;
    case 'x':
      if (account && isEpochMs(m.u)) absorbLift(state, account, family, m.u);
      break;
    case 'r':
      if (account) absorbReset(state, account);
      break;
    case 'b':
      if (account && isSessionHash(m.s) && bindingOf({ account, lastServedAtMs: m.t }, t)) absorbBinding(state, { sessionId: m.s, account, lastServedAtMs: m.t as number }, t);
      break;
    case 'l':
      if (account && (v = limitOf(m.v, t)) !== undefined) absorbLimit(state, account, (v as LearnedLimit | null) ?? undefined);
      break;
    case 'i':
      onInflight();
      break;
    case 's':
      if (account && (v = tokensOf(m.t))) absorbServed(state, account, v as TokensByKind, family ?? undefined);
      break;
  }
}

/**
 * Reads the pool's hashes (learned costs, quota evidence, cooldowns, learned limits) and folds each
 * value that is the pool's into `state`; ended cooldowns leave the hash.
 * @param t now, epoch ms
 * @returns how many readings there were, and how many cooldowns still running
 */
export async function pullShared(state: RouterState, conn: StoreConnection, merge: SharedMerges, t: number): Promise<{ readings: number; cooldowns: number }> {
  const redis = conn.redis;
  const [snaps, cooldowns, limits, learned] = await Promise.all([
    redis.hgetall(storeKeys.evidence),
    redis.hgetall(storeKeys.cooldowns),
    redis.hgetall(storeKeys.limits),
    redis.hgetall(storeKeys.learnedCosts),
  ]);
  const read = <T>(hash: string, field: string, text: string, what: string, parse: (v: unknown) => T | undefined) =>
    readSigned(conn, fieldName(hash, field), text, { what, read: parse });
  for (const [account, text] of Object.entries(learned)) {
    const windows = read(storeKeys.learnedCosts, account, text, 'learned costs', (v) => learnersOf(v, t));
    if (windows) absorbLearnedCosts(state, { [account]: windows });
  }
  for (const [account, text] of Object.entries(snaps)) {
    const snap = read(storeKeys.evidence, account, text, 'quota evidence', (v) => evidenceOf(v, t));
    if (snap) absorbEvidence(state, account, snap);
  }
  const ended: string[] = [];
  for (const [field, text] of Object.entries(cooldowns)) {
    const c = read(storeKeys.cooldowns, field, text, 'a cooldown', (v) => cooldownOf(v, t));
    if (!c) continue; // not the pool's: the next write of the field replaces it
    if (!(c.untilMs > t)) {
      ended.push(field);
      continue;
    }
    const [account, family] = field.split('\0');
    absorbCooldown(state, account, family ?? null, c, t);
  }
  // Ended cooldowns leave the hash (the lift keeps any that a router extended meanwhile).
  for (const field of ended) merge.lift(field, t).catch(() => undefined);
  for (const [account, text] of Object.entries(limits)) {
    const learned = read(storeKeys.limits, account, text, 'a learned concurrency limit', (v) => limitOf(v, t));
    if (learned !== undefined) absorbLimit(state, account, learned ?? undefined);
  }
  return { readings: Object.keys(snaps).length, cooldowns: Object.keys(cooldowns).length - ended.length };
}

/** Folds every session binding of the pool into `state`'s; @returns how many there were. */
export async function pullBindings(state: RouterState, conn: StoreConnection, now: () => number): Promise<number> {
  const redis = conn.redis;
  let pulled = 0;
  let cursor = '0';
  const t = now();
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', storeKeys.bindingPattern, 'COUNT', 500);
    cursor = next;
    if (keys.length === 0) continue;
    const values = await redis.mget(...keys);
    pulled += keys.length;
    keys.forEach((key, i) => {
      const b = readSigned(conn, key, values[i], { what: 'a session binding', read: (v) => bindingOf(v, t) });
      const sessionId = key.slice(storeKeys.binding('').length);
      if (b && isSessionHash(sessionId)) absorbBinding(state, { sessionId, account: b.account, lastServedAtMs: b.lastServedAtMs }, t);
    });
  } while (cursor !== '0');
  return pulled;
}

/**
 * The other routers' in-flight requests and reservations per account, from `flat` (router id,
 * record, router id, record, … as the gather script returns them). A record counts only when it
 * is signed by the router it names and has the shape and bounds of one; anything else counts
 * nothing and is refused (logged once).
 */
export function remoteLoad(conn: StoreConnection, flat: readonly string[]): Map<string, RemoteLoad> {
  const remote = new Map<string, RemoteLoad>();
  for (let i = 0; i + 1 < flat.length; i += 2) {
    if (flat[i] === conn.routerId) continue;
    const key = storeKeys.inflight(flat[i]);
    const got = conn.verified(key, flat[i + 1], 'an in-flight record');
    const record = got && (got.sender === flat[i] ? inflightOf(got.value) : undefined);
    if (got && !record) conn.refuse('an in-flight record', key, 'out of bounds, or signed by another router');
    for (const [account, [n, reserved]] of Object.entries(record ?? {})) {
      const sum = remote.get(account) ?? { inflight: 0, reserved: undefined };
      sum.inflight += n;
      if (reserved) sum.reserved = addCost(sum.reserved, reserved);
      remote.set(account, sum);
    }
  }
  return remote;
}
