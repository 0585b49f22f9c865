/**
 * One proxy per user profile, shared by every VS Code window: the first
 * window to bind the port leads (serves requests); the others make the holder
 * of the port prove that it knows the shared local key without revealing it
 * (identity.ts) — only then do they send the key, follow it through its
 * `/events` stream on the connection it proved itself on, and try to take over
 * the moment that stream ends. A holder that cannot prove it is another
 * program: the window reports the port blocked and retries now and then.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { EventEmitter } from 'node:events';
import type { Client } from 'undici';
import type { Logger } from '../log';
import { listen, type ProxyServer } from './server';
import { verifyHolder } from './identity';
import { KEY_ROTATED_EVENT, sendAnthropicError } from '../relay/clientAnswer';
import { forEachEvent, SseEventTooLargeError, SseFramer } from '../relay/sse';
import { clientRetry } from '../../routing/clientRetry';
import { DEFAULT_POLICY } from '../../routing/policy';

/** How soon a window still building its engine expects to serve, ms (the 503 "starting" answer's wait). */
const STARTING_RETRY_MS = 1_000;

/** This window's part. */
export type ProxyRole =
  { kind: 'starting' } | { kind: 'leader'; url: string } | { kind: 'follower'; url: string } | { kind: 'blocked'; url: string; reason: string } | { kind: 'stopped' };

export interface SharedProxyOptions {
  host: string;
  port: number;
  /** The local key; see {@link SharedProxy.setClientKey} for a rotation. */
  clientKey: string;
  log: Logger;
  /** Delay before retrying when the port is held by something that is not our proxy, or a leader that misbehaved, ms. */
  retryMs?: number;
}

/**
 * The most bytes of one unfinished event a follower holds from the leader's `/events` (its
 * events are a few bytes each). A leader that sends more — endless bytes without a blank line —
 * is not followed: the stream is cut and the port checked again after `retryMs`.
 */
export const MAX_LEADER_EVENT_BYTES = 64 * 1024;

/** How long a follower whose leader rotated the key waits to hear of the new key before checking the leader again, ms. */
const KEY_WAIT_MS = 5_000;

/** What the shared proxy hands a request to while this window leads: the engine (engine.ts), or a simulated one. */
export interface RequestHandler {
  /** The `node:http` request handler; never throws. */
  readonly handle: (req: IncomingMessage, res: ServerResponse) => void;
}

export class SharedProxy {
  private server: ProxyServer | undefined;
  private engine: RequestHandler | undefined;
  private follow: AbortController | undefined;
  private retry: NodeJS.Timeout | undefined;
  private disposed = false;
  private current: ProxyRole = { kind: 'starting' };
  private clientKey: string;
  /** Set while the leader's stream ended for a key rotation that this window has not heard of yet (see KEY_WAIT_MS). */
  private awaitingKey: NodeJS.Timeout | undefined;
  /** Emits `role` (ProxyRole) and `remoteChanged` (the leader's state changed). */
  readonly events = new EventEmitter();
  readonly url: string;

  constructor(private readonly opts: SharedProxyOptions) {
    this.url = `http://${opts.host}:${opts.port}`;
    this.clientKey = opts.clientKey;
  }

  /** A rotated key: proofs are checked against it from now on (a follow already running goes on). */
  setClientKey(key: string): void {
    this.clientKey = key;
    if (this.awaitingKey) {
      // The leader ended our stream for this rotation: check it again with the new key.
      clearTimeout(this.awaitingKey);
      this.awaitingKey = undefined;
      void this.start();
    }
  }

  get role(): ProxyRole {
    return this.current;
  }

  /** The engine requests go to while this window leads (swappable, e.g. for simulated accounts). */
  setEngine(engine: RequestHandler): void {
    this.engine = engine;
  }

  private readonly handle = (req: IncomingMessage, res: ServerResponse) => {
    if (this.engine) this.engine.handle(req, res);
    else
      sendAnthropicError(res, 503, 'api_error', 'Claude Router is starting.', {
        'retry-after': String(clientRetry(STARTING_RETRY_MS, DEFAULT_POLICY.clientRetryHorizonMs).retryAfterS),
      });
  };

  /** Leads, follows or reports the port blocked. Never throws. */
  async start(): Promise<ProxyRole> {
    if (this.disposed) return this.current;
    try {
      const server = await listen(this.handle, this.opts.host, this.opts.port);
      if (this.disposed) {
        // Disposed while binding: let the port go so another window can lead.
        await server.close(0);
        return this.current;
      }
      this.server = server;
      this.setRole({ kind: 'leader', url: server.url });
      return this.current;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') {
        this.setRole({ kind: 'blocked', url: this.url, reason: (err as Error).message });
        return this.current;
      }
    }
    const holder = await verifyHolder(this.url, this.clientKey);
    if (this.disposed) {
      if (holder.kind === 'ours') void holder.client.destroy().catch(() => undefined);
      return this.current;
    }
    if (holder.kind === 'ours') {
      this.setRole({ kind: 'follower', url: this.url });
      this.followLeader(holder.client);
    } else if (holder.kind === 'free') {
      return this.start(); // the leader left between our listen and our check
    } else {
      this.setRole({ kind: 'blocked', url: this.url, reason: `port ${this.opts.port} is taken by another program` }, holder.why);
      this.retryLater();
    }
    return this.current;
  }

  private retryLater(): void {
    this.retry = setTimeout(() => void this.start(), this.opts.retryMs ?? 10_000);
    this.retry.unref();
  }

  /**
   * Subscribes to the leader's change stream on the connection it proved itself on; when the
   * stream ends, tries to take over. A leader that ends the stream for a key rotation (its last
   * event, `key-rotated`) or refuses it with 401 is checked again once this window has the new
   * key, or after KEY_WAIT_MS. A leader that refuses the stream otherwise or sends an oversized
   * event is checked again only after `retryMs`, not at once.
   */
  private followLeader(client: Client): void {
    const ac = new AbortController();
    this.follow = ac;
    void (async () => {
      let misbehaved: string | undefined;
      let rotated = false;
      const keyFollowed = this.clientKey;
      try {
        const res = await client.request({ method: 'GET', path: '/events', headers: { 'x-claude-router-key': this.clientKey }, signal: ac.signal, bodyTimeout: 0 });
        // A 401 from the leader that just proved itself: the key was rotated before the stream opened.
        if (res.statusCode === 401) rotated = true;
        else if (res.statusCode !== 200) misbehaved = `it answered /events with status ${res.statusCode}`;
        else {
          const framer = new SseFramer(MAX_LEADER_EVENT_BYTES);
          for await (const chunk of res.body) {
            const complete = framer.push(chunk as Buffer);
            if (complete && hasEvent(complete, 'changed')) this.events.emit('remoteChanged');
            if (complete && hasEvent(complete, KEY_ROTATED_EVENT)) rotated = true;
          }
        }
      } catch (err) {
        if (err instanceof SseEventTooLargeError) misbehaved = `it sent more than ${MAX_LEADER_EVENT_BYTES} bytes without ending an event`;
        /* otherwise the leader went away (or we were disposed) */
      } finally {
        void client.destroy().catch(() => undefined);
      }
      if (ac.signal.aborted || this.disposed) return;
      if (misbehaved) {
        this.opts.log.warn(`proxy: stopped following the leading window: ${misbehaved}`);
        this.retryLater();
        return;
      }
      if (rotated) {
        // Said by the leader that proved itself, on the connection it proved itself on: the key was
        // rotated. Check it again once this window has the new key (setClientKey), or after KEY_WAIT_MS.
        this.opts.log.info('proxy: the leading window rotated the client key; following again with the new one');
        if (this.clientKey !== keyFollowed) return void this.start(); // heard of it already
        this.awaitingKey = setTimeout(() => {
          this.awaitingKey = undefined;
          void this.start();
        }, KEY_WAIT_MS);
        this.awaitingKey.unref();
        return;
      }
      this.opts.log.info('proxy: the leading window went away; taking over');
      // Spread the windows that race for the port a little.
      setTimeout(() => void this.start(), 50 + Math.random() * 200).unref();
    })();
  }

  /**
   * Announces a new role (`detail` goes to the log only). The same role again — the retry
   * loop finding the same program on the port — is neither logged nor announced.
   */
  private setRole(role: ProxyRole, detail?: string): void {
    const prev = this.current;
    if (prev.kind === role.kind && JSON.stringify(prev) === JSON.stringify(role)) return;
    this.current = role;
    this.opts.log.info(`proxy: ${role.kind}${'url' in role ? ` at ${role.url}` : ''}${'reason' in role ? ` (${role.reason}${detail ? `: ${detail}` : ''})` : ''}`);
    this.events.emit('role', role);
  }

  /** Stops serving or following. */
  async dispose(): Promise<void> {
    this.disposed = true;
    if (this.retry) clearTimeout(this.retry);
    if (this.awaitingKey) clearTimeout(this.awaitingKey);
    this.follow?.abort();
    const server = this.server;
    this.server = undefined;
    await server?.close(1_000);
    this.setRole({ kind: 'stopped' });
  }
}

/** Whether complete event bytes hold an event named `name`. */
function hasEvent(buf: Buffer, name: string): boolean {
  let found = false;
  forEachEvent(buf, (event) => !(found = event === name));
  return found;
}
