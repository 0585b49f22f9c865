/**
 * A client's request body, kept once for the whole request (failover resends
 * it) as the chunks Node received — never concatenated on the way upstream:
 * copying a large body costs more than relaying it (docs/performance.md). Bodies over the
 * limit are refused as soon as the limit is crossed rather than after
 * buffering them. All bodies held at once share one memory budget
 * ({@link BodyBudget}, `routing.max-buffered-body-bytes`).
 */
import type { IncomingMessage } from 'node:http';

/** Anthropic refuses requests above 32 MB (docs/anthropic-api.md#forwarding); so do we, locally. */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

export class BodyTooLargeError extends Error {}

/** The body would take the bodies held at once past the memory budget: refused before it is read. */
export class BodyBudgetError extends Error {}

/**
 * The bytes of request bodies the proxy holds at once, against one limit. A body counts from
 * the moment its head announces its length (`content-length`; a chunked body counts chunk by
 * chunk as it arrives) until its request ends or its answer is committed
 * ({@link RequestBody.release}), whichever is first.
 */
export class BodyBudget {
  private held = 0;

  /** Bytes counted now. */
  get heldBytes(): number {
    return this.held;
  }

  /** Whether `bytes` more would fit under `limit` (bytes) now. */
  fits(bytes: number, limit: number): boolean {
    return this.held + bytes <= limit;
  }

  /**
   * Counts `bytes` when they fit under `limit` with what is held already.
   * @param limit the budget, bytes (the request's configuration generation's)
   * @returns false, counting nothing, when they do not fit
   */
  take(bytes: number, limit: number): boolean {
    if (!this.fits(bytes, limit)) return false;
    this.held += bytes;
    return true;
  }

  /** Gives back `bytes` counted by {@link take}. */
  give(bytes: number): void {
    this.held -= bytes;
  }
}

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
   * @param counted bytes of `budget` this body holds, given back at {@link release}
   * @param parseRoom the part of `counted` that stands for the parse of the body ({@link takeParseRoom})
   */
  constructor(
    chunks: readonly Buffer[],
    readonly length: number,
    private counted = 0,
    private readonly budget?: BodyBudget,
    private parseRoom = 0,
  ) {
    this.chunks = chunks;
  }

  /**
   * Makes sure `bytes` of the budget stand for the parse of this body (its text and parsed
   * tree, which live beside the body until the garbage collector frees them, some time after
   * the parse): counted already when the request's head showed the body would be parsed, else
   * taken now; given back with the body ({@link release}). A body outside any budget always has room.
   * @param limit the budget's limit, bytes
   * @returns false, counting nothing more, when the budget has no room for them
   */
  takeParseRoom(bytes: number, limit: number): boolean {
    if (this.parseRoom >= bytes || this.budget === undefined) return true;
    if (!this.budget.take(bytes - this.parseRoom, limit)) return false;
    this.counted += bytes - this.parseRoom;
    this.parseRoom = bytes;
    return true;
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

  /** The last `n` bytes (fewer when the body is shorter); copies at most `n` bytes. */
  tail(n: number): Buffer {
    const last = this.chunks[this.chunks.length - 1];
    if (!last) return Buffer.alloc(0);
    if (last.length >= n || this.chunks.length === 1) return last.subarray(Math.max(0, last.length - n));
    const parts: Buffer[] = [];
    let got = 0;
    for (let i = this.chunks.length - 1; i >= 0 && got < n; i--) {
      const c = this.chunks[i];
      const take = Math.min(c.length, n - got);
      parts.unshift(c.subarray(c.length - take));
      got += take;
    }
    return Buffer.concat(parts, got);
  }

  /** The whole body decoded as UTF-8 (one copy; for the rare requests that must be parsed). */
  text(): string {
    return this.chunks.length === 1 ? this.chunks[0].toString('utf8') : Buffer.concat(this.chunks, this.length).toString('utf8');
  }

  /**
   * Lets go of the bytes and gives them back to the budget: the answer is committed, or the
   * request has ended. No attempt may follow. `length` stays. Safe to call more than once.
   */
  release(): void {
    this.released = true;
    this.chunks = [];
    this.budget?.give(this.counted);
    this.counted = this.parseRoom = 0;
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
 * Reads a body of at most {@link MAX_BODY_BYTES}, counting it against `budget`. A refused body is
 * drained — read and dropped, never kept — so the client can read the answer (see DRAIN_BYTES).
 * @param declared the request's `content-length` (NaN when it has none)
 * @param budgetLimit the budget's limit for this request, bytes
 * @param parseRoom bytes counted besides a `declared` body, from its head on, for the parse it
 *   will need ({@link RequestBody.takeParseRoom}); 0 for a body that will not be parsed or has no length
 * @throws BodyTooLargeError when `declared` or the bytes received exceed {@link MAX_BODY_BYTES}
 * @throws BodyBudgetError when `declared` (with `parseRoom`), or the bytes of a chunked body received so far, do not fit in the budget
 * @throws Error when the client aborts mid-body
 */
export function readBody(req: IncomingMessage, declared: number, budget: BodyBudget, budgetLimit: number, parseRoom: number): Promise<RequestBody> {
  const limit = MAX_BODY_BYTES;
  return new Promise((resolve, reject) => {
    // Not const: at the end the chunks go to the body, and the listeners (which live as long as
    // the request) keep an empty list, so releasing the body frees its bytes.
    let chunks: Buffer[] = [];
    let size = 0;
    let counted = 0;
    let reserved = 0;
    let failed = false;
    const refuse = (err: Error) => {
      if (failed) return;
      failed = true;
      chunks.length = 0;
      budget.give(counted + reserved);
      counted = reserved = 0;
      reject(err);
    };
    if (Number.isFinite(declared)) {
      if (declared > limit) refuse(new BodyTooLargeError());
      else if (budget.take(declared + parseRoom, budgetLimit)) {
        counted = declared;
        reserved = parseRoom;
      } else {
        refuse(new BodyBudgetError());
      }
    }
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (failed) {
        if (size > DRAIN_BYTES) req.destroy();
        return;
      }
      if (size > limit) return refuse(new BodyTooLargeError());
      if (size > counted) {
        // A chunked body (or more than announced, which node refuses anyway): count as it comes.
        if (!budget.take(size - counted, budgetLimit)) return refuse(new BodyBudgetError());
        counted = size;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (failed) return;
      const body = new RequestBody(chunks, size, counted + reserved, budget, reserved);
      chunks = [];
      counted = reserved = 0;
      resolve(body);
    });
    req.on('error', (err) => refuse(err));
    req.on('aborted', () => refuse(new Error('client aborted')));
  });
}
