/**
 * A client's request body, kept once for the whole request (failover resends
 * it) as the chunks Node received — never concatenated on the way upstream:
 * copying a large body costs more than relaying it (docs/performance.md). Bodies over the
 * limit are refused as soon as the limit is crossed rather than after
 * buffering them.
 */
import type { IncomingMessage } from 'node:http';

/** Anthropic refuses requests above 32 MB (docs/anthropic-api.md#forwarding); so do we, locally. */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

export class BodyTooLargeError extends Error {}

/**
 * The bytes of a request body, in the chunks they arrived in, until the answer is committed:
 * then no attempt can follow and {@link release} lets them go (a stream runs for seconds to
 * minutes after its first event, and a Claude Code body is hundreds of KB). A body that came in
 * one chunk (at most 64 KiB, node's read size) goes upstream as that Buffer, written with the
 * request head in one write, and undici keeps it until the call ends; only the larger,
 * multi-chunk bodies are worth the iterable that lets undici drop them.
 */
export class RequestBody {
  private chunks: readonly Buffer[];
  private released = false;

  /**
   * @param chunks the received chunks, in order (not copied)
   * @param length their total size, bytes
   */
  constructor(
    chunks: readonly Buffer[],
    readonly length: number,
  ) {
    this.chunks = chunks;
  }

  /**
   * The body as undici sends it on one call: nothing, one Buffer, or the chunks (an iterable
   * written in order, which lets go of them once read, so a call that runs on does not keep
   * them). No copy is made per attempt. Multi-chunk bodies need an explicit `content-length`.
   * @throws Error after {@link release}
   */
  forUpstream(): Buffer | Iterable<Buffer> | undefined {
    if (this.released) throw new Error('the request body was released when its answer was committed');
    if (this.length === 0) return undefined;
    return this.chunks.length === 1 ? this.chunks[0] : new ChunkFeed(this.chunks);
  }

  /** The first `n` bytes (fewer when the body is shorter); copies at most `n` bytes. */
  head(n: number): Buffer {
    const first = this.chunks[0];
    if (!first || first.length >= n || this.chunks.length === 1) return first ? first.subarray(0, n) : Buffer.alloc(0);
    return Buffer.concat(this.chunks, Math.min(n, this.length));
  }

  /** The whole body decoded as UTF-8 (one copy; for the rare requests that must be parsed). */
  text(): string {
    return this.chunks.length === 1 ? this.chunks[0].toString('utf8') : Buffer.concat(this.chunks, this.length).toString('utf8');
  }

  /** Lets go of the bytes: the answer is committed, no attempt follows. `length` stays. */
  release(): void {
    this.released = true;
    this.chunks = [];
  }

  /** A body from one buffer (tests, synthetic requests). */
  static of(buf: Buffer): RequestBody {
    return new RequestBody(buf.length > 0 ? [buf] : [], buf.length);
  }
}

/** One call's pass over a body's chunks: the reference goes as soon as undici starts reading them. */
class ChunkFeed implements Iterable<Buffer> {
  constructor(private chunks: readonly Buffer[]) {}

  [Symbol.iterator](): Iterator<Buffer> {
    const chunks = this.chunks;
    this.chunks = [];
    return chunks[Symbol.iterator]();
  }
}

/**
 * Bytes a refused body may still send: the rest of an over-limit body is read and dropped so
 * the client gets to read the 413 (a server that stops reading and closes shows a client
 * that is still sending a connection reset instead); past this, the connection is cut.
 */
const DRAIN_BYTES = 2 * MAX_BODY_BYTES;

/**
 * @param declared the request's `content-length` (NaN when it has none)
 * @throws BodyTooLargeError when `declared` or the bytes received exceed `limit`
 * @throws Error when the client aborts mid-body
 */
export function readBody(req: IncomingMessage, declared: number, limit: number): Promise<RequestBody> {
  return new Promise((resolve, reject) => {
    // Not const: at the end the chunks go to the body, and the listeners (which live as long as
    // the request) keep an empty list, so releasing the body frees its bytes.
    let chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    const refuse = (err: Error) => {
      if (failed) return;
      failed = true;
      chunks.length = 0;
      reject(err);
    };
    if (Number.isFinite(declared) && declared > limit) refuse(new BodyTooLargeError());
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (failed) {
        if (size > DRAIN_BYTES) req.destroy();
        return;
      }
      if (size > limit) return refuse(new BodyTooLargeError());
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (failed) return;
      const body = new RequestBody(chunks, size);
      chunks = [];
      resolve(body);
    });
    req.on('error', (err) => refuse(err));
    req.on('aborted', () => refuse(new Error('client aborted')));
  });
}
