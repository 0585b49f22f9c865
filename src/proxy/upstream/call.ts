/**
 * One upstream call on undici's dispatch handler API: the answer's head and
 * body arrive as callbacks, with no response stream object in between (the
 * lightest way undici offers to read an answer). A caller either buffers the
 * body (JSON answers, errors) or takes it over chunk by chunk (event streams).
 * A compressed answer reaches the caller decoded (bodyDecoder.ts). The client
 * going away aborts the call.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { answerCoding, BodyDecoder, decodedHeaders } from './bodyDecoder';

/** Thrown into a running call when the client's connection closed. */
export class ClientGoneError extends Error {
  constructor() {
    super('the client went away');
  }
}

/** Whether the client is still there, and the upstream call to abort when it goes. */
export class ClientLink {
  private running: Dispatcher.DispatchController | undefined;
  /** Called once when the client goes (a held request gives its place back); allocated only when something waits. */
  private goneListeners: (() => void)[] | undefined;
  gone = false;

  /** The client's connection closed before its answer was complete: aborts the running call, tells the listeners. */
  markGone(): void {
    if (this.gone) return;
    this.gone = true;
    this.running?.abort(new ClientGoneError());
    const listeners = this.goneListeners;
    this.goneListeners = undefined;
    for (const fn of listeners ?? []) fn();
  }

  /**
   * Calls `fn` once when the client goes (not when it has already gone: check {@link gone}).
   * @returns a function that removes `fn`
   */
  onGone(fn: () => void): () => void {
    (this.goneListeners ??= []).push(fn);
    return () => {
      const listeners = this.goneListeners;
      const i = listeners ? listeners.indexOf(fn) : -1;
      if (listeners && i !== -1) listeners.splice(i, 1);
    };
  }

  attach(controller: Dispatcher.DispatchController): void {
    this.running = controller;
    if (this.gone) controller.abort(new ClientGoneError());
  }

  detach(controller: Dispatcher.DispatchController): void {
    if (this.running === controller) this.running = undefined;
  }
}

/** The head of an upstream answer. Header names are lower case (undici). */
export interface UpstreamHead {
  status: number;
  headers: IncomingHttpHeaders;
}

/** Takes over an answer's body as it arrives; it settles the call itself. */
export interface StreamingBody {
  onData(chunk: Buffer): void;
  onEnd(): void;
  onError(err: Error): void;
}

/** How the caller reads a body: buffered up to a size (then the call is cut), or streamed. */
export type BodyMode = { buffer: number } | { stream: StreamingBody };

export type CallResult<T> =
  /** No answer head: connection refused or reset, timeout, or aborted. */
  | { kind: 'failed'; error: Error }
  /** A buffered answer. `error`: the body broke off (what arrived is in `body`); `truncated`: cut at the cap. */
  | { kind: 'buffered'; head: UpstreamHead; body: Buffer; error?: Error; truncated: boolean }
  /** A streamed answer, with the value its StreamingBody settled with. */
  | { kind: 'streamed'; value: T };

/**
 * Lets go of the raw head undici's handler adapter keeps on the controller for the whole call
 * (`rawHeaders`: one Buffer per header name and value, views into the socket read that carried
 * the head — about 40 objects and that read per running call). The head is read from the parsed
 * headers; nothing reads the raw list after the head callback (undici 7, `UnwrapController`).
 */
function dropRawHeaders(controller: Dispatcher.DispatchController): void {
  const c = controller as { rawHeaders?: unknown };
  if (c.rawHeaders) c.rawHeaders = null;
}

/**
 * The most a buffered (non-streamed) answer's body may take after its head, ms: as long as the
 * agent lets a body sit idle (upstream/agent.ts), which never fires for a body that trickles in a
 * byte at a time — this bounds that one too (one clock read per chunk, no timer).
 */
export const BUFFERED_BODY_MS = 300_000;

/**
 * Sends one request upstream.
 * @param onHead called once with the answer's head; returns how to read the body. A streaming
 *   body calls `settle` exactly once; later callbacks are ignored. An answer that came with a
 *   `content-encoding` arrives decoded: its head without `content-encoding`/`content-length`,
 *   its body as decoded bytes (the buffer cap counts those), a body that does not decode (or a
 *   coding the router does not read) as a body that broke off; the controller handed over
 *   then pauses, resumes and aborts through the decoder.
 * @param bodyMs how long a buffered body may take after its head, ms (default {@link BUFFERED_BODY_MS}):
 *   past it the body counts as broken off, with an error saying so
 * Never rejects.
 */
export function callUpstream<T>(
  dispatcher: Dispatcher,
  request: Dispatcher.DispatchOptions,
  link: ClientLink,
  onHead: (head: UpstreamHead, controller: Dispatcher.DispatchController, settle: (value: T) => void) => BodyMode,
  bodyMs = BUFFERED_BODY_MS,
): Promise<CallResult<T>> {
  return new Promise((resolve) => {
    let settled = false;
    /** The call's controller as the link and the caller see it: undici's, or the decoder standing in for it. */
    let controller: Dispatcher.DispatchController | undefined;
    let head: UpstreamHead | undefined;
    let stream: StreamingBody | undefined;
    /** Set when the answer came compressed: undici's body goes through it, decoded bytes come out. */
    let decoder: BodyDecoder | undefined;
    let cap = 0;
    /** A buffered body must end by then (epoch ms): the idle timeout never fires for a trickle. */
    let deadline = Infinity;
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;

    const finish = (result: CallResult<T>): void => {
      if (settled) return;
      settled = true;
      if (controller) link.detach(controller);
      resolve(result);
    };
    const buffered = (error?: Error): CallResult<T> => ({
      kind: 'buffered',
      head: head!,
      body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size),
      error,
      truncated,
    });

    // The body as the caller reads it (decoded bytes when the answer came compressed, so the
    // read limit counts what a decompression would build, and a bomb is cut at the cap).
    const take = (chunk: Buffer): void => {
      if (settled) return;
      if (stream) return stream.onData(chunk);
      if (Date.now() > deadline) {
        const err = new Error(`the answer body did not end within ${bodyMs / 1000} s of its head`);
        finish(buffered(err));
        controller!.abort(err);
        return;
      }
      if (size + chunk.length > cap) {
        truncated = true;
        finish(buffered());
        controller!.abort(new Error('answer body over the read limit'));
        return;
      }
      size += chunk.length;
      chunks.push(chunk);
    };
    const ended = (): void => {
      if (settled) return;
      if (stream) return stream.onEnd();
      finish(buffered());
    };
    const broke = (err: Error): void => {
      if (settled) return;
      if (stream) return stream.onError(err);
      finish(buffered(err));
    };

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        link.attach(c);
      },
      onResponseStart(c, status, headers) {
        if (status < 200) return; // informational (103 Early Hints): the real head follows
        dropRawHeaders(c);
        const encoding = headers['content-encoding'];
        const coding = encoding === undefined ? undefined : answerCoding(encoding);
        if (coding !== undefined) {
          decoder = new BodyDecoder(coding, c, { data: take, end: ended, error: broke });
          headers = decodedHeaders(headers);
        }
        head = { status, headers };
        const mode = onHead(head, decoder ?? c, (value) => finish({ kind: 'streamed', value }));
        if ('stream' in mode) stream = mode.stream;
        else {
          cap = mode.buffer;
          deadline = Date.now() + bodyMs;
        }
        if (decoder) {
          // The client going away now aborts through the decoder, which also ends the body.
          link.detach(c);
          controller = decoder;
          link.attach(decoder);
          decoder.start();
        }
      },
      onResponseData(_c, chunk) {
        if (settled) return;
        if (decoder) return decoder.write(chunk);
        take(chunk);
      },
      onResponseEnd() {
        if (settled) return;
        if (decoder) return decoder.end();
        ended();
      },
      onResponseError(_c, err) {
        if (settled) return;
        if (!head) return finish({ kind: 'failed', error: err });
        if (decoder) return decoder.fail(err);
        broke(err);
      },
    };
    try {
      dispatcher.dispatch(request, handler);
    } catch (err) {
      finish({ kind: 'failed', error: err as Error });
    }
  });
}
