/**
 * Shares a router's RouterState with the other routers of a pool through the store (docs/shared-pool.md).
 * The request path stays on the in-memory state: this router's changes go to Redis behind it (write-behind,
 * pipelined), the others' arrive over pub/sub and are folded in (sharedPull.ts reads them, peerState.ts folds them):
 * each view follows the pool within a second.
 *
 * Shared: quota evidence (newest wins), cooldowns (merged by a Lua script, never shortened; a lift
 * deletes only the cooldown it lifted), session bindings (a key per session expiring after the
 * idle TTL), in-flight counts and reservations (one key per router that expires unless renewed,
 * so a killed router's leases disappear), learned concurrency limits, and learned costs (every router
 * tells the others the usage it served, so each learner counts the pool's usage against the same
 * evidence; the learners themselves go to the store every 30 s for routers that join later).
 * Decision logs stay local.
 *
 * Redis is untrusted input: every value and notification is signed with the pool's key and checked
 * against its shape and bounds (sharedValues.ts) before it is folded in; the merges run here, as
 * compare-and-set (sharedWrites.ts), so a value that is not the pool's never wins one.
 *
 * Redis unreachable: nothing here waits for it; the others' in-flight counts are dropped (they
 * cannot be kept current); at every (re)connection this router pushes its state (merged by the
 * same rules) and pulls the pool's.
 */
import type { StoreConnection, StoreMessage } from '../../store/connection';
import { storeKeys } from '../../store/keys';
import type { CostEstimate } from '../../routing/costEstimate';
import type { Cooldown, QuotaSnapshot } from '../../quota/types';
import type { TokensByKind } from '../../quota/learnedCosts';
import type { RemoteLoad } from './leases';
import type { StateMirror } from './mirror';
import type { RouterState } from './routerState';
import { absorbBinding } from './peerState';
import { foldMessage, pullBindings, pullShared, remoteLoad } from './sharedPull';
import { addCost, bindingOf, sameLoad } from './sharedValues';
import { fieldName, readSigned, sharedMerges } from './sharedWrites';

/** How long a router's in-flight record lives unless renewed, ms: a killed router's leases are gone this long after its last renewal. */
export const INFLIGHT_TTL_MS = 10_000;
/** A router renews its in-flight record (and re-reads the others') this often, ms. */
const HEARTBEAT_MS = 3_000;
/** Changes of one burst leave together this long after the first, ms. */
const FLUSH_MS = 50;
/** The learners go to the store every this many heartbeats (30 s): they change slowly, and every router learns the pool's usage itself. */
const LEARNED_EVERY_BEATS = 10;
/** How long the request path waits for a binding this router does not hold, ms, before it plans without it. */
const LOOKUP_WAIT_MS = 250;

/** What the engine asks of the shared pool. */
export interface SharedState {
  /**
   * Loads the pool's binding of a session this router holds none for; undefined (no wait) while
   * the store is unreachable. Never rejects; waits at most LOOKUP_WAIT_MS.
   */
  lookupBinding(session: string): Promise<void> | undefined;
  /**
   * Pushes this router's state and pulls the pool's (also done at every reconnection); resolves
   * after one attempt, never rejecting: a failed one is logged and tried again in the background.
   */
  reconcile(): Promise<void>;
  /** Stops sharing: removes this router's in-flight record. */
  close(): Promise<void>;
}

export interface ShareOptions {
  now?: () => number;
  log: { info(m: string): void; warn(m: string): void };
}

/** The hash field of a cooldown: the account, or account NUL family for a model-scoped one. */
function cooldownField(account: string, family: string | null): string {
  return family === null ? account : `${account}\0${family}`;
}

/** Starts sharing `state` through `conn`. */
export function shareState(state: RouterState, conn: StoreConnection, opts: ShareOptions): SharedState {
  const now = opts.now ?? Date.now;
  const redis = conn.redis;
  const merge = sharedMerges(conn, now);
  const ignore = () => undefined;
  /** Sessions re-bound to the same account since the last flush: session → [account, lastServedAtMs]. */
  const bindings = new Map<string, [string, number]>();
  const evidence = new Map<string, QuotaSnapshot>();
  /** Usage served since the last flush, by account NUL family. */
  const served = new Map<string, TokensByKind>();
  let inflightDirty = false;
  let flushTimer: NodeJS.Timeout | undefined;

  const flush = () => {
    flushTimer = undefined;
    if (!conn.up) {
      bindings.clear();
      evidence.clear();
      served.clear(); // the learners count what they can: the usage of an outage is this router's only
      return; // the reconciliation at reconnection pushes the whole state
    }
    for (const [key, t] of served) {
      const [account, family] = key.split('\0');
      conn.publish({ k: 's', a: account, f: family || null, t });
    }
    served.clear();
    for (const [account, snap] of evidence) {
      merge.evidence(account, snap).catch(ignore);
      conn.publish({ k: 'e', a: account, v: snap });
    }
    evidence.clear();
    for (const [session, [account, at]] of bindings) merge.binding(session, account, at, state.affinity.idleTtl).catch(ignore);
    bindings.clear();
    if (inflightDirty) writeInflight();
  };
  const soon = () => {
    flushTimer ??= setTimeout(flush, FLUSH_MS);
    flushTimer.unref?.();
  };

  const writeInflight = () => {
    inflightDirty = false;
    if (!conn.up) return;
    const mine: Record<string, [number, CostEstimate | null]> = {};
    for (const [account, n, reserved] of state.leases.local()) mine[account] = [n, reserved ?? null]; // local() hands out copies
    const key = storeKeys.inflight(conn.routerId);
    redis.set(key, conn.signed(key, mine), 'PX', INFLIGHT_TTL_MS).catch(ignore);
    redis.sadd(storeKeys.routers, conn.routerId).catch(ignore);
    conn.publish({ k: 'i' });
  };

  let gathering: Promise<void> | undefined;
  let gatherAgain = false;
  /** Re-reads every other router's in-flight record (one script call); one at a time, the last request repeated. */
  const gather = (): Promise<void> => {
    if (gathering) {
      gatherAgain = true;
      return gathering;
    }
    gathering = (async () => {
      do {
        gatherAgain = false;
        if (!conn.up) break;
        const flat = await redis.crGatherInflight(storeKeys.routers, storeKeys.inflightPrefix).catch(() => undefined);
        if (!flat) break;
        const remote = remoteLoad(conn, flat);
        if (!sameLoad(remote, lastRemote)) {
          lastRemote = remote;
          state.leases.setRemote(remote);
        }
      } while (gatherAgain);
    })().finally(() => (gathering = undefined));
    return gathering;
  };
  let lastRemote = new Map<string, RemoteLoad>();
  /** A gather that failed past the store's own errors (a bug): logged, never an unhandled rejection. */
  const gatherFailed = (err: unknown) => opts.log.warn(`state store: reading the other routers' in-flight records failed (${(err as Error)?.message?.split('\n')[0]})`);
  let gatherTimer: NodeJS.Timeout | undefined;
  const gatherSoon = () => {
    gatherTimer ??= setTimeout(() => {
      gatherTimer = undefined;
      gather().catch(gatherFailed);
    }, FLUSH_MS);
    gatherTimer.unref?.();
  };

  const mirror: StateMirror = {
    evidence: (account, merged) => {
      evidence.set(account, merged);
      soon();
    },
    cooldown: (account, family, merged) => {
      if (!conn.up) return;
      merge
        .cooldown(cooldownField(account, family), merged)
        .then((stored) => conn.publish({ k: 'c', a: account, f: family, c: stored }))
        .catch(ignore);
    },
    lifted: (account, family, cooldown) => {
      if (!conn.up) return;
      merge.lift(cooldownField(account, family), cooldown.untilMs).catch(ignore);
      conn.publish({ k: 'x', a: account, f: family, u: cooldown.untilMs });
    },
    reset: (account) => {
      if (!conn.up) return;
      // A person's reset lifts whatever runs, here and everywhere: every cooldown field of the account goes.
      redis
        .hkeys(storeKeys.cooldowns)
        .then((all) => {
          const fields = all.filter((f) => f === account || f.startsWith(`${account}\0`));
          return fields.length > 0 ? redis.hdel(storeKeys.cooldowns, ...fields) : 0;
        })
        .catch(ignore);
      // Its rejecting evidence was dropped here: the pool's copy goes too (the next reading brings fresh evidence).
      if (!state.snapshots.has(account)) redis.hdel(storeKeys.evidence, account).catch(ignore);
      conn.publish({ k: 'r', a: account });
    },
    bound: (session, account, at, moved) => {
      if (moved) {
        // A new or moved binding goes at once (in this tick's pipeline): the session's next request may come through another router.
        bindings.delete(session);
        if (!conn.up) return;
        // Served just now: it needs no merge (a compare-and-set would cost the round trip of its read first).
        const key = storeKeys.binding(session);
        redis.crSetNow(key, conn.signed(key, { account, lastServedAtMs: at }), state.affinity.idleTtl).catch(ignore);
        conn.publish({ k: 'b', s: session, a: account, t: at });
        return;
      }
      // A re-bind only renews the idle TTL: it may wait for the burst's flush.
      bindings.set(session, [account, at]);
      soon();
    },
    limit: (account, learned) => {
      if (!conn.up) return;
      redis.hset(storeKeys.limits, account, conn.signed(fieldName(storeKeys.limits, account), learned ?? null)).catch(ignore);
      conn.publish({ k: 'l', a: account, v: learned ?? null });
    },
    inflight: () => {
      inflightDirty = true;
      soon();
    },
    served: (account, tokens, family) => {
      const key = `${account}\0${family ?? ''}`;
      const sum = served.get(key);
      served.set(key, sum ? addCost(sum, tokens) : { ...tokens });
      soon();
    },
  };

  /** Another router's notification, folded in (sharedPull.ts); an in-flight one re-reads the others' records soon. */
  const onMessage = (m: StoreMessage) => foldMessage(state, m, now(), gatherSoon);

  /** Pushes every part of this state by the merge rules, then folds the pool's into it. */
  const reconcile = async (): Promise<void> => {
    if (!conn.up) return;
    const t = now();
    const pushes: Promise<unknown>[] = [];
    // What this router learned while the store was away reaches the others at once, not at their next reconnection.
    for (const [account, snap] of state.snapshots) {
      pushes.push(merge.evidence(account, snap).then((r) => r.wrote && conn.publish({ k: 'e', a: account, v: snap })));
    }
    const pushCooldown = (account: string, family: string | null, c: Cooldown) =>
      pushes.push(merge.cooldown(cooldownField(account, family), c).then((stored) => conn.publish({ k: 'c', a: account, f: family, c: stored })));
    for (const [account, c] of state.cooldowns) if (c.untilMs > t && !c.local) pushCooldown(account, null, c);
    for (const [account, m] of state.scopedCooldowns) for (const [family, c] of m) if (c.untilMs > t) pushCooldown(account, family, c);
    const ttl = state.affinity.idleTtl;
    for (const b of state.affinity.live(t)) {
      const left = ttl - (t - b.lastServedAtMs);
      if (left <= 0) continue;
      pushes.push(
        merge.binding(b.sessionId, b.account, b.lastServedAtMs, left).then((r) => r.wrote && conn.publish({ k: 'b', s: b.sessionId, a: b.account, t: b.lastServedAtMs })),
      );
    }
    for (const a of state.concurrency.entries()) if (a.learned) pushes.push(redis.hset(storeKeys.limits, a.label, conn.signed(fieldName(storeKeys.limits, a.label), a.learned)));
    const pushedShared = pushes.length - state.snapshots.size;
    pushes.push(pushLearned());
    writeInflight();
    await Promise.all(pushes);

    const pulled = await pullShared(state, conn, merge, t);
    const pulledBindings = await pullBindings(state, conn, now);
    await gather();
    opts.log.info(
      `state store: reconciled — pushed ${state.snapshots.size} quota readings and ${pushedShared} cooldowns, bindings and limits; pulled ${pulled.readings} readings, ${pulled.cooldowns} cooldowns, ${pulledBindings} bindings`,
    );
  };

  const reconciling = conn.reconcileOnUp('reconciling the shared state', reconcile);
  const onDown = () => {
    // The others' in-flight counts cannot be kept current: this router counts its own until the store returns.
    if (lastRemote.size > 0) state.leases.setRemote((lastRemote = new Map<string, RemoteLoad>()));
  };
  /** This router's learners, for a router that starts (or returns) later: the pool's copy keeps the one with more samples per account. */
  const pushLearned = (): Promise<unknown> => {
    const saved = state.learnedCosts.toSaved();
    const accounts = Object.keys(saved);
    if (accounts.length === 0) return Promise.resolve();
    return Promise.all(accounts.map((account) => merge.learners(account, saved[account])));
  };
  let beats = 0;
  const heartbeat = setInterval(() => {
    if (!conn.up) return;
    writeInflight();
    gather().catch(gatherFailed);
    if (++beats % LEARNED_EVERY_BEATS === 0) pushLearned().catch(ignore);
  }, HEARTBEAT_MS);
  heartbeat.unref?.();

  state.mirror = mirror;
  conn.on('message', onMessage);
  conn.on('down', onDown);

  return {
    lookupBinding: (session) => {
      if (!conn.up) return undefined;
      const key = storeKeys.binding(session);
      const lookup = redis
        .get(key)
        .then((text) => {
          const t = now();
          const b = readSigned(conn, key, text, { what: 'a session binding', read: (v) => bindingOf(v, t) });
          if (b) absorbBinding(state, { sessionId: session, account: b.account, lastServedAtMs: b.lastServedAtMs }, t);
        })
        .catch(ignore);
      return Promise.race([lookup, new Promise<void>((resolve) => setTimeout(resolve, LOOKUP_WAIT_MS).unref?.())]);
    },
    reconcile: () => reconciling.now(),
    close: async () => {
      clearInterval(heartbeat);
      clearTimeout(gatherTimer);
      reconciling.stop();
      if (flushTimer) {
        clearTimeout(flushTimer);
        flush();
      }
      conn.off('message', onMessage);
      conn.off('down', onDown);
      if (state.mirror === mirror) state.mirror = undefined;
      if (conn.up) await Promise.all([redis.del(storeKeys.inflight(conn.routerId)), redis.srem(storeKeys.routers, conn.routerId)]).catch(ignore);
      if (conn.up) conn.publish({ k: 'i' });
    },
  };
}
