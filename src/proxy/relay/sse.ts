/**
 * The one server-sent-events parser: SseFramer cuts a byte stream at event boundaries,
 * forEachEvent reads the events in the complete part, eventData decodes an event's data on
 * demand. The relay never changes the bytes the client receives (upstream chunks are forwarded
 * untouched); it only watches them to learn where the stream is: the first meaningful event,
 * the usage, an error, `message_stop`. Content deltas are skipped by name, never decoded.
 */
import { anthropicErrorBody } from './anthropicError';

/** Formats an Anthropic-shaped `event: error` frame. */
export function sseErrorFrame(type: string, message: string): string {
  return `event: error\ndata: ${anthropicErrorBody(type, message)}\n\n`;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * The most bytes the relay holds back from the client (16 MiB each): of one unfinished event,
 * and of the pings before the first content. Anthropic's events are small — content comes as many
 * deltas — so an upstream that sends more without finishing an event is broken, and holding
 * its bytes would grow without bound.
 */
export const MAX_HELD_BYTES = 16 * 1024 * 1024;

/** Thrown by SseFramer.push when an unfinished event passes its limit. */
export class SseEventTooLargeError extends Error {
  constructor(limit: number) {
    super(`an upstream event passed ${limit} bytes without ending`);
  }
}

/**
 * Splits a byte stream at event boundaries (a blank line): complete events are
 * released, a partial event is held until it completes. The relay forwards
 * only complete events, so a stream cut mid-event never leaves half an event
 * glued to the router's own `event: error`. Linear in the input: a chunk with
 * a boundary is released without copying when nothing is held.
 */
export class SseFramer {
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** The last two bytes held (-1 when fewer), however many chunks they came in. */
  private last = -1;
  private beforeLast = -1;

  /** @param maxEventBytes the most bytes of one unfinished event held (default MAX_HELD_BYTES) */
  constructor(private readonly maxEventBytes = MAX_HELD_BYTES) {}

  /**
   * Bytes of the events this chunk completes (with any held bytes before them), or undefined.
   * @throws SseEventTooLargeError when the unfinished event held passes `maxEventBytes`
   */
  push(chunk: Buffer): Buffer | undefined {
    let end = lastBoundaryEnd(chunk);
    if (end < 0 && this.held.length > 0) end = joinBoundaryEnd(this.beforeLast, this.last, chunk);
    if (end < 0) {
      if (chunk.length > 0) this.hold(chunk);
      return undefined;
    }
    const head = end === chunk.length ? chunk : chunk.subarray(0, end);
    const out = this.held.length === 0 ? head : Buffer.concat([...this.held, head]);
    this.held = [];
    this.heldBytes = 0;
    this.last = this.beforeLast = -1;
    if (end < chunk.length) this.hold(chunk.subarray(end));
    return out;
  }

  private hold(bytes: Buffer): void {
    this.heldBytes += bytes.length;
    if (this.heldBytes > this.maxEventBytes) throw new SseEventTooLargeError(this.maxEventBytes);
    this.held.push(bytes);
    if (bytes.length >= 2) this.beforeLast = bytes[bytes.length - 2];
    else if (bytes.length === 1) this.beforeLast = this.last;
    if (bytes.length > 0) this.last = bytes[bytes.length - 1];
  }

  /** Whether bytes of an unfinished event are held. */
  hasPartial(): boolean {
    return this.held.some((b) => b.length > 0);
  }
}

/** Byte needles (a string needle is encoded on every search). */
const LFLF = Buffer.from('\n\n');
const LFCRLF = Buffer.from('\n\r\n');

/** Index just after the last blank line (`\n\n`, `\r\n\r\n`, `\n\r\n`) in `buf`, or -1 (native search). */
function lastBoundaryEnd(buf: Buffer): number {
  // The usual chunk is whole events: it ends with the blank line.
  const n = buf.length;
  if (n >= 2 && buf[n - 1] === LF && buf[n - 2] === LF) return n;
  if (n >= 3 && buf[n - 1] === LF && buf[n - 2] === CR && buf[n - 3] === LF) return n;
  const lf = buf.lastIndexOf(LFLF);
  const crlf = buf.lastIndexOf(LFCRLF);
  return Math.max(lf >= 0 ? lf + 2 : -1, crlf >= 0 ? crlf + 3 : -1);
}

/**
 * A blank line split between the held bytes (ending `p2`, `p1`) and the start of `next`:
 * index in `next` just after it, or -1.
 */
function joinBoundaryEnd(p2: number, p1: number, next: Buffer): number {
  if (p1 === LF && next[0] === LF) return 1;
  if (p1 === LF && next[0] === CR && next[1] === LF) return 2;
  if (p1 === CR && p2 === LF && next[0] === LF) return 1;
  return -1;
}

/**
 * Called for each event found by {@link forEachEvent}: its name, and where its lines are in
 * `buf` (read the data with {@link eventData} only when needed). Returning false stops the scan.
 */
export type EventVisitor = (event: string, buf: Buffer, start: number, end: number) => boolean;

const COLON = 0x3a;
const SPACE = 0x20;

/** Whether the line `buf[start, end)` holds the field `name` (`name` then `:` or the end of the line). */
function isField(buf: Buffer, start: number, end: number, name: string): boolean {
  const n = name.length;
  if (end - start < n || (end - start > n && buf[start + n] !== COLON)) return false;
  for (let i = 0; i < n; i++) if (buf[start + i] !== name.charCodeAt(i)) return false;
  return true;
}

/**
 * Reads the events in bytes that hold only complete events (an SseFramer's output), in one
 * pass over the lines (`\n` or `\r\n`; blank line ends an event; `:` comments and unknown
 * fields skipped; one space after the colon dropped): event names are read from the bytes;
 * data is not decoded, so content deltas cost no string work.
 */
export function forEachEvent(buf: Buffer, visit: EventVisitor): void {
  let pos = 0;
  let blockStart = 0;
  let name: string | undefined;
  let any = false;
  while (pos < buf.length) {
    let lineEnd = buf.indexOf(LF, pos);
    if (lineEnd < 0) lineEnd = buf.length;
    const contentEnd = lineEnd > pos && buf[lineEnd - 1] === CR ? lineEnd - 1 : lineEnd;
    if (contentEnd === pos) {
      // A blank line ends the event.
      if (any && !visit(name ?? 'message', buf, blockStart, pos)) return;
      name = undefined;
      any = false;
      blockStart = lineEnd + 1;
    } else if (isField(buf, pos, contentEnd, 'event')) {
      let v = Math.min(pos + 6, contentEnd);
      if (buf[v] === SPACE && v < contentEnd) v++;
      name = buf.toString('utf8', v, contentEnd);
      any = true;
    } else if (isField(buf, pos, contentEnd, 'data')) {
      any = true;
    }
    pos = lineEnd + 1;
  }
  if (any) visit(name ?? 'message', buf, blockStart, buf.length);
}

/** The data text (`data:` lines joined with `\n`) of the event at `buf[start, end)`. Decodes on call. */
export function eventData(buf: Buffer, start: number, end: number): string {
  // The usual event has one data line: one decode, no join.
  let first: string | undefined;
  let more: string[] | undefined;
  for (let pos = start; pos < end;) {
    let lineEnd = buf.indexOf(LF, pos);
    if (lineEnd < 0 || lineEnd > end) lineEnd = end;
    const contentEnd = lineEnd > pos && buf[lineEnd - 1] === CR ? lineEnd - 1 : lineEnd;
    if (isField(buf, pos, contentEnd, 'data')) {
      let v = Math.min(pos + 5, contentEnd);
      if (buf[v] === SPACE && v < contentEnd) v++;
      const value = buf.toString('utf8', v, contentEnd);
      if (first === undefined) first = value;
      else (more ??= [first]).push(value);
    }
    pos = lineEnd + 1;
  }
  return more ? more.join('\n') : (first ?? '');
}

/** One parsed event: its name (`message` when unnamed) and its data text. */
export interface SseEvent {
  event: string;
  data: string;
}

/** Events as objects, for readers off the hot path (a window following the leader's `/events`). */
export class SseScanner {
  private readonly framer = new SseFramer();

  /**
   * Feeds a chunk; returns the events it completed.
   * @throws SseEventTooLargeError when an unfinished event passes MAX_HELD_BYTES
   */
  feed(chunk: Buffer): SseEvent[] {
    const events: SseEvent[] = [];
    const complete = this.framer.push(chunk);
    if (complete) forEachEvent(complete, (event, buf, start, end) => events.push({ event, data: eventData(buf, start, end) }) > 0);
    return events;
  }
}
