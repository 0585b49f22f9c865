/**
 * Decodes an upstream answer that came compressed although the router asks for
 * `accept-encoding: identity` (agent.ts): a CDN or middlebox in front of the
 * API may compress anyway (seen with Cloudflare, claude-relay-service#1039).
 * Read as it came, such a body is neither JSON nor an event stream, and every
 * account would be tried — each one served and billed — before the client got a
 * 502. The router reads usage and stream errors from the bytes it relays, so it
 * relays the decoded bytes, without `content-encoding` (Claude Code accepts
 * identity); docs/anthropic-api.md#compression allows this instead of passing the compressed
 * bytes through and decoding a copy.
 *
 * Only the codings HTTP clients commonly decode are read (RFC 9110 §8.4.1):
 * `gzip` (`x-gzip`), `deflate`, `br`, one at a time. Anything else (`zstd`,
 * a list such as `gzip, br`) is not read at all: the answer fails like a body
 * that broke off, so the attempt moves on to the next account, rather than
 * relaying bytes the router cannot check (a stream's errors, its end, usage).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Transform } from 'node:stream';
import * as zlib from 'node:zlib';
import type { Dispatcher } from 'undici';

/** Where decoded bytes go; after `end` or `error` nothing more is delivered. */
export interface DecodedSink {
  data(chunk: Buffer): void;
  end(): void;
  error(err: Error): void;
}

/**
 * Decoders by coding name (lower case). Each is made on the first body byte. Output is
 * flushed per input chunk (as undici's fetch does) so an event stream's events are not held
 * back; the end of the input is checked strictly, so a cut compressed body is an error.
 */
const DECODERS: Record<string, (first: Buffer) => Transform> = {
  gzip: () => zlib.createGunzip({ flush: zlib.constants.Z_SYNC_FLUSH }),
  'x-gzip': () => zlib.createGunzip({ flush: zlib.constants.Z_SYNC_FLUSH }),
  // `deflate` is zlib-wrapped (RFC 9110 §8.4.1.2), but some servers send raw deflate: a zlib
  // stream's first byte says compression method 8 in its low nibble (RFC 1950 §2.2).
  deflate: (first) => ((first[0] & 0x0f) === 0x08 ? zlib.createInflate({ flush: zlib.constants.Z_SYNC_FLUSH }) : zlib.createInflateRaw({ flush: zlib.constants.Z_SYNC_FLUSH })),
  br: () => zlib.createBrotliDecompress({ flush: zlib.constants.BROTLI_OPERATION_FLUSH }),
};

/**
 * The content coding of an answer, lower case, from its `content-encoding` header; undefined
 * for none or `identity` (the answer is read as it comes).
 */
export function answerCoding(value: string | string[]): string | undefined {
  const coding = (Array.isArray(value) ? value.join(', ') : value).trim().toLowerCase();
  return coding === '' || coding === 'identity' ? undefined : coding;
}

/**
 * The head a decoded answer is read and relayed with: the upstream's headers without
 * `content-encoding` and `content-length` (both describe the compressed bytes).
 */
export function decodedHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const name in headers) {
    if (name !== 'content-encoding' && name !== 'content-length') out[name] = headers[name];
  }
  return out;
}

/**
 * Decodes one answer body on its way from undici to the caller, and stands in for undici's
 * controller towards the caller: `pause`/`resume` hold back the decoded output (the decoder
 * then stops inflating at its buffer mark, its input fills up, and the upstream read pauses —
 * so a slow client still slows the upstream); `abort` aborts the upstream call, destroys the
 * decoder and ends the body with that error. `end` or `error` reaches the sink exactly once,
 * after the last decoded byte.
 */
export class BodyDecoder implements Dispatcher.DispatchController {
  /** Undefined for a coding the router does not read. */
  private readonly open: ((first: Buffer) => Transform) | undefined;
  private z: Transform | undefined;
  private done = false;
  private held = false;
  private upstreamPaused = false;
  private readonly drained = (): void => {
    this.upstreamPaused = false;
    this.upstream.resume();
  };

  /**
   * @param coding the answer's coding, as {@link answerCoding} gives it
   * @param upstream undici's controller of the call
   */
  constructor(
    readonly coding: string,
    private readonly upstream: Dispatcher.DispatchController,
    private readonly sink: DecodedSink,
  ) {
    this.open = Object.hasOwn(DECODERS, coding) ? DECODERS[coding] : undefined;
  }

  /** Fails the body at once when the coding is not one the router reads (nothing of it is read). */
  start(): void {
    if (!this.open) this.abort(new Error(`the upstream answered in a content-encoding the router does not read (${this.coding})`));
  }

  /** One compressed chunk from upstream. */
  write(chunk: Buffer): void {
    if (this.done) return;
    const z = this.z ?? this.decoder(chunk);
    if (!z.write(chunk) && !this.upstreamPaused) {
      this.upstreamPaused = true;
      this.upstream.pause();
      z.once('drain', this.drained);
    }
  }

  /** The compressed body ended; the sink's `end` follows the last decoded byte. */
  end(): void {
    if (this.done) return;
    if (this.z) return void this.z.end();
    // No body at all (HEAD, 204): nothing to decode, and not a broken compressed stream.
    this.done = true;
    this.sink.end();
  }

  /** The upstream body broke off: what was decoded has been delivered; the rest is dropped. */
  fail(err: Error): void {
    if (this.done) return;
    this.done = true;
    this.z?.destroy();
    this.sink.error(err);
  }

  abort(reason: Error): void {
    this.upstream.abort(reason);
    this.fail(reason);
  }

  pause(): void {
    this.held = true;
    this.z?.pause();
  }

  resume(): void {
    this.held = false;
    this.z?.resume();
  }

  get paused(): boolean {
    return this.held;
  }

  get aborted(): boolean {
    return this.upstream.aborted;
  }

  get reason(): Error | null {
    return this.upstream.reason;
  }

  private decoder(first: Buffer): Transform {
    const z = this.open!(first);
    this.z = z;
    z.on('data', (chunk: Buffer) => {
      if (!this.done) this.sink.data(chunk);
    });
    z.on('end', () => {
      if (this.done) return;
      this.done = true;
      this.sink.end();
    });
    z.on('error', (err: Error) => {
      if (this.done) return;
      this.done = true;
      this.sink.error(new Error(`the ${this.coding} answer body could not be decoded (${err.message})`));
      this.upstream.abort(err);
    });
    if (this.held) z.pause();
    return z;
  }
}
