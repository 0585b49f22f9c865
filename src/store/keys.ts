/**
 * The shared store's key names. Every key starts with `claude-router:`, so a Redis database can
 * hold other data beside one pool (a second pool takes another database: the URL's `/db`).
 * Labels and sticky-key hashes appear in key names; tokens never do.
 */

const PREFIX = 'claude-router:';

export const storeKeys = {
  /** Hash per account: `v` (version, +1 per write), `blob` (sealed pair), `by` (writer's router id), `at` (epoch ms). */
  credentials: (label: string) => `${PREFIX}cred:${label}`,
  /** Per account, the refresh lock: a router id, with an expiry (SET NX PX). */
  refreshLock: (label: string) => `${PREFIX}lock:refresh:${label}`,
  /** The check value of the key the pool's pairs are sealed with (encryption.ts `keyCheck`). */
  keyCheck: `${PREFIX}keycheck`,
  /** Hash: account → quota snapshot JSON (the newest `observedAtMs` wins). */
  evidence: `${PREFIX}evidence`,
  /** Hash: `account` or `account NUL family` → cooldown JSON (never shortened). */
  cooldowns: `${PREFIX}cooldowns`,
  /** Per session (sticky-key hash): binding JSON, expiring after the idle TTL. */
  binding: (sessionHash: string) => `${PREFIX}bind:${sessionHash}`,
  /** SCAN pattern of every binding. */
  bindingPattern: `${PREFIX}bind:*`,
  /** Per router: its in-flight counts and reservations JSON, expiring unless its router renews it. */
  inflight: (routerId: string) => `${PREFIX}inflight:${routerId}`,
  /** Prefix of the in-flight keys (the gather script appends a router id). */
  inflightPrefix: `${PREFIX}inflight:`,
  /** Set of the router ids that wrote an in-flight key (the gather script drops the expired). */
  routers: `${PREFIX}routers`,
  /** Hash: account → learned concurrency limit JSON, or `null` when forgotten (the newest wins). */
  limits: `${PREFIX}limits`,
  /** Hash: account → learned costs JSON (src/quota/learnedCosts.ts; the newest wins). */
  learnedCosts: `${PREFIX}learned-costs`,
  /** The pub/sub channel of change notifications. */
  channel: `${PREFIX}events`,
};
