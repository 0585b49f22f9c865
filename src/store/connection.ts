/**
 * One router's link to the shared store: a command connection (auto-pipelined: the commands of
 * one tick leave as one round trip), a subscriber connection for the pool's change
 * notifications, the Lua scripts, and whether Redis is reachable now.
 *
 * The store is never a single point of failure: commands fail at once while Redis is
 * unreachable (no offline queue, so nothing on the request path ever waits for it); the
 * connection retries in the background; the outage is logged once, and `up` fires on every
 * (re)connection so the owners reconcile.
 */
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { storeKeys } from './keys';
import { GATHER_INFLIGHT, RELEASE_LOCK, SET_NOW, SWAP_FIELD, SWAP_KEY, WRITE_CREDENTIALS } from './scripts';
import type { StoreKey } from './encryption';
import { macKeyOf, signValue, verifyValue, type MacKey } from './signedValues';
import type { StoreTarget } from '../config/storeUrl';

/** What `/status`, the CLI's `status` and the status bar say of the store. */
export interface StoreStatus {
  /** The store's URL without user or password. */
  url: string;
  /** `connecting`: not reached yet since start; `unreachable`: lost (or never reached) and retrying. */
  state: 'connecting' | 'connected' | 'unreachable';
  /** Since when it is in that state, epoch ms. */
  sinceMs: number;
  /** A problem that keeps part of the sharing off while connected (a key that does not match the pool's), or null. */
  problem: string | null;
}

/** A change notification: `r` the sending router's id, `k` the kind; the rest names what changed. */
export interface StoreMessage {
  r: string;
  k: string;
  [field: string]: unknown;
}

/** The Lua scripts, as commands of the connection (scripts.ts holds what each does). */
export interface StoreScripts {
  crSwapField(hash: string, field: string, hadValue: '0' | '1', read: string, next: string): Promise<number>;
  crSwapKey(key: string, hadValue: '0' | '1', read: string, next: string, ttlMs: number): Promise<number>;
  crSetNow(key: string, value: string, ttlMs: number): Promise<number>;
  crGatherInflight(routers: string, prefix: string): Promise<string[]>;
  crReleaseLock(lock: string, owner: string): Promise<number>;
  crWriteCredentials(hash: string, expectedVersion: string, blob: string, by: string, atMs: number, print: string): Promise<number>;
}

export interface ConnectionOptions {
  /** The pool's key (store.key): the values and notifications this connection signs and verifies use a MAC key derived from it. */
  key: StoreKey;
  log: { info(m: string): void; warn(m: string): void };
  now?: () => number;
  /** How long a command may take before it counts as failed, ms (default 2 000). */
  commandTimeoutMs?: number;
}

/** Every script by its command name (StoreScripts). */
const SCRIPTS: ReadonlyArray<[keyof StoreScripts, string]> = [
  ['crSwapField', SWAP_FIELD],
  ['crSwapKey', SWAP_KEY],
  ['crSetNow', SET_NOW],
  ['crGatherInflight', GATHER_INFLIGHT],
  ['crReleaseLock', RELEASE_LOCK],
  ['crWriteCredentials', WRITE_CREDENTIALS],
];

/** How many distinct refused values are remembered (each is logged once); past it, no more are logged. */
const REFUSALS_LOGGED_MAX = 1_000;

/** A failed reconciliation runs again after this long, doubling up to {@link RETRY_MAX_MS}, ms. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 10_000;

/** Reconnection waits: 100 ms, growing to this (ms), so a restarted Redis is back in use within a second or so. */
const MAX_RECONNECT_WAIT_MS = 1_000;

export class StoreConnection extends EventEmitter {
  /** This router's id in the pool (random per process): its in-flight key, its locks, the sender of its messages. */
  readonly routerId = randomBytes(8).toString('hex');
  readonly redis: Redis & StoreScripts;
  private readonly sub: Redis;
  private state: StoreStatus['state'] = 'connecting';
  private sinceMs: number;
  private problem: string | null = null;
  private readonly now: () => number;
  private closed = false;
  private readonly mac: MacKey;
  /** What was refused already (kind and key name): each is logged once. */
  private readonly refusals = new Set<string>();

  constructor(
    readonly target: StoreTarget,
    private readonly opts: ConnectionOptions,
  ) {
    super();
    this.now = opts.now ?? Date.now;
    this.mac = macKeyOf(opts.key);
    this.sinceMs = this.now();
    const base = {
      host: target.host,
      port: target.port,
      db: target.db,
      username: target.username,
      password: target.password,
      tls: target.tls ? {} : undefined,
      lazyConnect: true,
      connectTimeout: 2_000,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (times: number) => Math.min(100 * times, MAX_RECONNECT_WAIT_MS),
    };
    this.redis = new Redis({
      ...base,
      enableAutoPipelining: true,
      // A new binding leaves in the same tick, before the answer that made it: the session's next request may come through another router at once.
      autoPipeliningIgnoredCommands: ['crSetNow'],
      commandTimeout: opts.commandTimeoutMs ?? 2_000,
    }) as Redis & StoreScripts;
    // The subscriber queues its SUBSCRIBE until connected (and ioredis re-subscribes after a reconnection).
    this.sub = new Redis({ ...base, enableOfflineQueue: true });
    for (const [name, lua] of SCRIPTS) this.redis.defineCommand(name, { numberOfKeys: 1, lua });
    let lastError = '';
    const noteError = (err: Error) => (lastError = (err as NodeJS.ErrnoException).code ?? err.message.split('\n')[0]);
    this.redis.on('error', noteError);
    this.sub.on('error', noteError);
    // Up only once commands can run (the scripts loaded: a script's first use then costs one round trip, not two) AND the
    // notifications are subscribed: a router that reconciles after that misses nothing another router pushes meanwhile.
    const ready = { commands: false, subscribed: false };
    const update = () => {
      if (ready.commands && ready.subscribed) this.setState('connected', '');
      else if (this.state === 'connected' || (!ready.commands && !ready.subscribed)) this.setState('unreachable', lastError);
    };
    /** `part` holds once `conn` is ready and `prepare` has succeeded on it; a closed connection drops it. */
    const track = (conn: Redis, part: keyof typeof ready, prepare: () => Promise<unknown>) => {
      conn.on('ready', () => {
        void prepare()
          .then(
            () => true,
            () => false,
          )
          .then((ok) => {
            ready[part] = ok && conn.status === 'ready';
            update();
          })
          .catch((err: Error) => this.opts.log.warn(`state store: a listener of the connection failed (${err.message.split('\n')[0]})`));
      });
      conn.on('close', () => {
        ready[part] = false;
        update();
      });
    };
    // A script that fails to load still runs (ioredis falls back to EVAL): only its first use costs a second round trip.
    track(this.redis, 'commands', () => Promise.all(SCRIPTS.map(([, lua]) => this.redis.script('LOAD', lua))).catch(() => undefined));
    track(this.sub, 'subscribed', () => this.sub.subscribe(storeKeys.channel));
    this.sub.on('message', (_channel: string, text: string) => this.onMessage(text));
  }

  /**
   * Connects both connections; resolves once connected or after `waitMs` (default 3 000) —
   * whichever comes first, never rejecting: an unreachable store leaves the router serving from
   * its local copy while the connection retries.
   */
  async start(waitMs = 3_000): Promise<void> {
    this.sub.connect().catch(() => undefined);
    this.redis.connect().catch(() => undefined);
    if (this.up) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.off('up', done);
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      this.on('up', done);
    });
    if (!this.up && this.state === 'connecting') this.setState('unreachable', 'no answer');
  }

  /** Whether commands can be sent now. */
  get up(): boolean {
    return this.state === 'connected';
  }

  status(): StoreStatus {
    return { url: this.target.display, state: this.state, sinceMs: this.sinceMs, problem: this.problem };
  }

  /** Sets (or clears, with null) the problem `status()` reports. */
  setProblem(problem: string | null): void {
    if (problem === this.problem) return;
    this.problem = problem;
    this.emit('status');
  }

  /**
   * Runs `task` at every (re)connection and whenever `now()` is called (while the store is up); a task
   * that fails — a command timed out on a loaded machine — runs again after 0.5 s, doubling to 10 s,
   * while the store stays up (the next reconnection runs it anyway). The first failure of a series
   * is logged, naming `what`.
   * @returns `now()`: run it at once, resolving after that attempt (never rejecting); `stop()`
   */
  reconcileOnUp(what: string, task: () => Promise<void>): { now(): Promise<void>; stop(): void } {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const run = async (attempt: number): Promise<void> => {
      clearTimeout(timer);
      timer = undefined;
      if (stopped || !this.up) return;
      try {
        await task();
      } catch (err) {
        if (attempt === 0) this.opts.log.warn(`state store: ${what} failed (${(err as Error).message.split('\n')[0]}); trying again while the store is reachable`);
        if (stopped || !this.up) return;
        timer = setTimeout(() => void run(attempt + 1), Math.min(RETRY_FIRST_MS * 2 ** attempt, RETRY_MAX_MS));
        timer.unref?.();
      }
    };
    const onUp = () => void run(0);
    this.on('up', onUp);
    return {
      now: () => run(0),
      stop: () => {
        stopped = true;
        clearTimeout(timer);
        this.off('up', onUp);
      },
    };
  }

  /** Sends a change notification to the other routers of the pool, signed (nothing while unreachable). */
  publish(message: Omit<StoreMessage, 'r'>): void {
    if (!this.up) return;
    this.redis.publish(storeKeys.channel, signValue(this.mac, storeKeys.channel, this.routerId, JSON.stringify(message))).catch(() => undefined);
  }

  /** `value` as JSON signed by this router for the key `name` (what {@link verified} accepts). */
  signed(name: string, value: unknown): string {
    return signValue(this.mac, name, this.routerId, JSON.stringify(value));
  }

  /**
   * The value a router of the pool signed for the key `name`, parsed; undefined for no text, and for a
   * text that is unsigned, not authentic or no JSON (logged once per `what` and key: `what` names the
   * kind, e.g. "quota evidence"). Never throws.
   */
  verified(name: string, text: string | null | undefined, what: string): { sender: string; value: unknown } | undefined {
    if (typeof text !== 'string') return undefined;
    const v = verifyValue(this.mac, name, text);
    if (!v.ok)
      return this.refuse(
        what,
        name,
        v.why === 'unsigned' ? 'unsigned (an older router, or someone without the pool key)' : 'not authentic (altered, or written without the pool key)',
      );
    try {
      return { sender: v.sender, value: JSON.parse(v.json) as unknown };
    } catch {
      return this.refuse(what, name, 'signed but no JSON');
    }
  }

  /** Logs once per `what` and key that a value of the store was ignored, and why (never the value). @returns undefined */
  refuse(what: string, name: string, why: string): undefined {
    const seen = `${what}\0${name}`;
    if (this.refusals.has(seen) || this.refusals.size >= REFUSALS_LOGGED_MAX) return undefined;
    this.refusals.add(seen);
    this.opts.log.warn(`state store: ignored ${what} in ${name}: ${why}`);
    return undefined;
  }

  /** Closes both connections. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([this.redis.quit().catch(() => this.redis.disconnect()), this.sub.quit().catch(() => this.sub.disconnect())]);
    this.removeAllListeners();
  }

  private onMessage(text: string): void {
    const got = this.verified(storeKeys.channel, text, 'a change notification');
    if (!got || got.sender === this.routerId) return;
    const message = got.value as StoreMessage;
    if (typeof message !== 'object' || message === null || Array.isArray(message) || typeof message.k !== 'string') return;
    message.r = got.sender;
    try {
      this.emit('message', message);
    } catch (err) {
      // A listener that failed on a notification must not end the process (this runs in the Redis client's event).
      this.opts.log.warn(`state store: a change notification of kind ${JSON.stringify(message.k.slice(0, 8))} could not be applied (${(err as Error).message.split('\n')[0]})`);
    }
  }

  private setState(state: StoreStatus['state'], reason: string): void {
    if (this.closed || state === this.state) return;
    const was = this.state;
    const lostForMs = this.now() - this.sinceMs;
    this.state = state;
    this.sinceMs = this.now();
    if (state === 'connected') {
      if (was === 'unreachable')
        this.opts.log.info(`state store ${this.target.display}: reachable again after ${Math.round(lostForMs / 1000)} s; reconciling this router's state with it`);
      else this.opts.log.info(`state store ${this.target.display}: connected`);
      this.emit('up');
    } else {
      this.opts.log.warn(`state store ${this.target.display}: unreachable${reason ? ` (${reason})` : ''}; serving from this machine's copy, and reconciling when it returns`);
      this.emit('down');
    }
    this.emit('status');
  }
}
