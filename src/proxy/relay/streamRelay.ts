/**
 * Relays an upstream event stream to the client as it arrives — each upstream
 * chunk of whole events in one client write, so a burst of events reaches the
 * client as the same number of chunks. The stream is held until its first
 * meaningful event (not `ping`): an `event: error` before that rotates to the
 * next account with nothing sent; after it the response is committed, and a
 * failure ends the stream with one Anthropic-shaped `event: error` after the
 * last whole event — never half an event, never a second `message_start`. The attempt's
 * tokens are replaced in every event on its way out (redact.ts).
 */
import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { DecisionOutcome, UsageRecord } from '../../routing/decision';
import { streamErrorType, usageFromEvent } from './answerUsage';
import { redactNeedles, tokenNeedles } from './redact';
import { eventData, forEachEvent, MAX_HELD_BYTES, SseFramer, sseErrorFrame } from './sse';
import type { ClientLink, StreamingBody } from '../upstream/call';

/** What the relay asks of the attempt that runs it. */
export interface StreamRelayHooks {
  /** Writes the response head and binds the session; called once, before the first event goes out. */
  commit(): void;
  /** Records the attempt's result (`success`, `truncated`, `stream_rate_limited`, …). */
  record(result: string): void;
  /** An `event: error` of `type` arrived before any content: cools the account down; returns the result to record. */
  errorBeforeContent(type: string): string;
  warn(message: string): void;
  /** The tokens of the attempt (access and refresh, also those a refresh gave it): replaced in every event before it goes out (redact.ts). */
  readonly tokens: readonly (string | undefined)[];
}

/** How the relay ended. */
export type StreamEnd =
  | { kind: 'served'; outcome: DecisionOutcome; usage: UsageRecord | null }
  /** Nothing was sent: try another account. `status`/`type` describe the failure for the client if none is left. */
  | { kind: 'rotate'; status: number; type: string; message: string }
  | { kind: 'client_gone' };

/** HTTP status that stands for an `event: error` type when it must be answered as a plain response. */
const STREAM_ERROR_STATUS: Record<string, number> = { overloaded_error: 529, rate_limit_error: 429, api_error: 500 };

/**
 * The relays streaming now, so a closing router can end them ({@link StreamRelay.shutDown}): an
 * intrusive list, joined and left with a few field writes — a `Set` of relays measured about
 * +0.06 on the SSE c=32 CPU ratio (hashing each relay on its way in and out).
 */
export class LiveStreams {
  private first: StreamRelay | undefined;

  join(r: StreamRelay): void {
    r.nextLive = this.first;
    if (this.first) this.first.prevLive = r;
    this.first = r;
  }

  leave(r: StreamRelay): void {
    if (r.prevLive) r.prevLive.nextLive = r.nextLive;
    else if (this.first === r) this.first = r.nextLive;
    else return; // not in the list (left already)
    if (r.nextLive) r.nextLive.prevLive = r.prevLive;
    r.prevLive = r.nextLive = undefined;
  }

  /** The relays in the list now. */
  all(): StreamRelay[] {
    const out: StreamRelay[] = [];
    for (let r = this.first; r; r = r.nextLive) out.push(r);
    return out;
  }
}

export class StreamRelay implements StreamingBody {
  /** Neighbours in {@link LiveStreams} (its own bookkeeping). */
  prevLive: StreamRelay | undefined = undefined;
  nextLive: StreamRelay | undefined = undefined;
  private readonly framer = new SseFramer();
  /** Whole events received before commit (pings), sent with the first content. */
  private readonly held: Buffer[] = [];
  private heldBytes = 0;
  private committed = false;
  private sawStop = false;
  private sawError = false;
  private usage: UsageRecord | null = null;
  private ended = false;
  private readonly resume = (): void => this.controller.resume();
  /** The attempt's tokens, encoded once: each batch of whole events is scanned for them. */
  private readonly needles: readonly Buffer[];

  /**
   * @param live the relays running now, which this one joins until it ends (the router ends them when it closes: {@link shutDown})
   */
  constructor(
    private readonly res: ServerResponse,
    private readonly link: ClientLink,
    private readonly controller: Dispatcher.DispatchController,
    private readonly hooks: StreamRelayHooks,
    private readonly settle: (end: StreamEnd) => void,
    private readonly live?: LiveStreams,
  ) {
    this.needles = tokenNeedles(hooks.tokens);
    live?.join(this);
  }

  /**
   * The router is closing and cannot wait for this stream: a committed one ends now, after its
   * last whole event, with one `overloaded_error` event (a client retries that) and the outcome
   * `error_after_commit` — not a client abort. One not yet committed is left to finish or fail.
   */
  shutDown(message: string): void {
    if (this.ended || !this.committed) return;
    this.ended = true;
    this.live?.leave(this);
    this.res.off('drain', this.resume);
    this.res.write(sseErrorFrame('overloaded_error', message));
    this.hooks.record('shutdown');
    this.res.end();
    this.settle({ kind: 'served', outcome: 'error_after_commit', usage: this.usage });
    this.abortUpstream();
  }

  onData(chunk: Buffer): void {
    if (this.ended) return;
    try {
      this.relay(chunk);
    } catch (err) {
      // A throw here would escape undici's parser callbacks; end this attempt instead.
      this.conclude(err as Error);
      this.abortUpstream();
    }
  }

  onEnd(): void {
    this.conclude(undefined);
  }

  onError(err: Error): void {
    this.conclude(err);
  }

  private relay(chunk: Buffer): void {
    // Only whole events go to the client; a partial event waits for its end.
    const complete = this.framer.push(chunk);
    if (!complete) return;
    forEachEvent(complete, this.watch);
    if (this.ended) return;
    if (!this.committed) {
      this.heldBytes += complete.length;
      if (this.heldBytes > MAX_HELD_BYTES) throw new Error(`the upstream sent over ${MAX_HELD_BYTES} bytes of pings before any content`);
      this.held.push(complete);
      return;
    }
    // Whole events only (the framer holds a partial one), so no token straddles two writes.
    const out = redactNeedles(this.held.length > 0 ? Buffer.concat([...this.held.splice(0), complete]) : complete, this.needles);
    if (!this.res.write(out)) {
      // Backpressure: the client reads slower than upstream sends.
      this.controller.pause();
      this.res.once('drain', this.resume);
    }
  }

  /** Looks at one event on its way through; false stops the scan (the attempt is over). */
  private readonly watch = (event: string, buf: Buffer, start: number, end: number): boolean => {
    if (event === 'ping') return true;
    if (!this.committed) {
      if (event === 'error') {
        const type = streamErrorType(eventData(buf, start, end));
        this.hooks.record(this.hooks.errorBeforeContent(type));
        this.ended = true;
        this.live?.leave(this);
        this.settle({ kind: 'rotate', status: STREAM_ERROR_STATUS[type] ?? 500, type, message: `Upstream stream error before content (${type}).` });
        this.abortUpstream();
        return false;
      }
      this.committed = true;
      this.hooks.commit();
    }
    if (event === 'message_start' || event === 'message_delta') this.usage = usageFromEvent(event, eventData(buf, start, end), this.usage);
    else if (event === 'message_stop') this.sawStop = true;
    else if (event === 'error') this.sawError = true;
    return true;
  };

  /** The stream ended (`failure` undefined), broke, or the client left. */
  private conclude(failure: Error | undefined): void {
    if (this.ended) return;
    this.ended = true;
    this.live?.leave(this);
    this.res.off('drain', this.resume);
    if (failure && this.link.gone) {
      this.hooks.record('client_abort');
      return this.settle(this.committed ? { kind: 'served', outcome: 'client_abort', usage: this.usage } : { kind: 'client_gone' });
    }
    if (!this.committed) {
      if (failure) {
        this.hooks.record('stream_failed');
        this.hooks.warn(`stream failed before content (${failure.message})`);
        return this.settle({ kind: 'rotate', status: 502, type: 'api_error', message: 'Claude Router: the upstream stream failed before any content.' });
      }
      // An empty stream (or one with only pings) gave the client nothing: rotate.
      this.hooks.record('empty_stream');
      return this.settle({ kind: 'rotate', status: 502, type: 'api_error', message: 'Claude Router: the upstream stream ended before any content.' });
    }
    if (failure) this.hooks.warn(`stream failed after content (${failure.message})`);
    let outcome: DecisionOutcome = 'success';
    if (this.sawError) outcome = 'error_after_commit';
    else if (!this.sawStop) {
      // A held partial event is dropped: the client sees whole events, then one clean error.
      outcome = 'truncated';
      this.res.write(sseErrorFrame('api_error', 'Claude Router: the upstream stream ended before message_stop.'));
    }
    this.hooks.record(outcome);
    this.res.end();
    this.settle({ kind: 'served', outcome, usage: this.usage });
  }

  private abortUpstream(): void {
    this.controller.abort(new Error('relay ended the upstream stream'));
  }
}
