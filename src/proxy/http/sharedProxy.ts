/**
 * One proxy per user profile, shared by every VS Code window: the first
 * window to bind the port leads (serves requests); the others check that the
 * port is really our proxy (an authenticated `/status` with the shared local
 * key, not just an open port), follow it through its `/events` stream, and
 * try to take over the moment that stream ends.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { EventEmitter } from 'node:events';
import { request } from 'undici';
import type { RouterEngine } from '../engine';
import type { Logger } from '../log';
import { listen, type ProxyServer } from './server';
import { sendAnthropicError } from '../relay/clientAnswer';
import { SseScanner } from '../relay/sse';

/** This window's part. */
export type ProxyRole =
  { kind: 'starting' } | { kind: 'leader'; url: string } | { kind: 'follower'; url: string } | { kind: 'blocked'; url: string; reason: string } | { kind: 'stopped' };

export interface SharedProxyOptions {
  host: string;
  port: number;
  clientKey: string;
  log: Logger;
  /** Delay before retrying when the port is held by something that is not our proxy, ms. */
  retryMs?: number;
}

/** What a check of the port found. */
type Probe = 'ours' | 'foreign' | 'free';

export class SharedProxy {
  private server: ProxyServer | undefined;
  private engine: RouterEngine | undefined;
  private follow: AbortController | undefined;
  private retry: NodeJS.Timeout | undefined;
  private disposed = false;
  private current: ProxyRole = { kind: 'starting' };
  /** Emits `role` (ProxyRole) and `remoteChanged` (the leader's state changed). */
  readonly events = new EventEmitter();
  readonly url: string;

  constructor(private readonly opts: SharedProxyOptions) {
    this.url = `http://${opts.host}:${opts.port}`;
  }

  get role(): ProxyRole {
    return this.current;
  }

  /** The engine requests go to while this window leads (swappable, e.g. for simulated accounts). */
  setEngine(engine: RouterEngine): void {
    this.engine = engine;
  }

  private readonly handle = (req: IncomingMessage, res: ServerResponse) => {
    if (this.engine) this.engine.handle(req, res);
    else sendAnthropicError(res, 503, 'api_error', 'Claude Router is starting.');
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
    const probe = await this.probe();
    if (probe === 'ours') {
      this.setRole({ kind: 'follower', url: this.url });
      this.followLeader();
    } else if (probe === 'free') {
      return this.start(); // the leader left between our listen and our probe
    } else {
      this.setRole({ kind: 'blocked', url: this.url, reason: `port ${this.opts.port} is used by another program` });
      this.retry = setTimeout(() => void this.start(), this.opts.retryMs ?? 10_000);
      this.retry.unref();
    }
    return this.current;
  }

  private async probe(): Promise<Probe> {
    try {
      const res = await request(`${this.url}/status`, {
        headers: { 'x-claude-router-key': this.opts.clientKey, host: `${this.opts.host}:${this.opts.port}` },
        headersTimeout: 3_000,
        bodyTimeout: 3_000,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) return 'foreign';
      return (JSON.parse(text) as { service?: string }).service === 'claude-router' ? 'ours' : 'foreign';
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? (err as { cause?: NodeJS.ErrnoException }).cause?.code;
      return code === 'ECONNREFUSED' ? 'free' : 'foreign';
    }
  }

  /** Subscribes to the leader's change stream; when it ends, tries to take over. */
  private followLeader(): void {
    const ac = new AbortController();
    this.follow = ac;
    void (async () => {
      try {
        const res = await request(`${this.url}/events`, {
          headers: { 'x-claude-router-key': this.opts.clientKey },
          signal: ac.signal,
          bodyTimeout: 0,
        });
        const scanner = new SseScanner();
        for await (const chunk of res.body) {
          if (scanner.feed(chunk as Buffer).some((e) => e.event === 'changed')) this.events.emit('remoteChanged');
        }
      } catch {
        /* the leader went away (or we were disposed) */
      }
      if (ac.signal.aborted || this.disposed) return;
      this.opts.log.info('proxy: the leading window went away; taking over');
      // Spread the windows that race for the port a little.
      setTimeout(() => void this.start(), 50 + Math.random() * 200).unref();
    })();
  }

  private setRole(role: ProxyRole): void {
    this.current = role;
    this.opts.log.info(`proxy: ${role.kind}${'url' in role ? ` at ${role.url}` : ''}${'reason' in role ? ` (${role.reason})` : ''}`);
    this.events.emit('role', role);
  }

  /** Stops serving or following. */
  async dispose(): Promise<void> {
    this.disposed = true;
    if (this.retry) clearTimeout(this.retry);
    this.follow?.abort();
    const server = this.server;
    this.server = undefined;
    await server?.close(1_000);
    this.setRole({ kind: 'stopped' });
  }
}
