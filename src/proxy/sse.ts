/**
 * An incremental server-sent-events scanner. It never changes the bytes the
 * client receives (the relay forwards upstream chunks untouched); it only
 * watches them to learn where the stream is: the first meaningful event, the
 * usage, an error, `message_stop`. Only the few small events it needs are
 * JSON-parsed; content deltas are skipped by name.
 */
import { StringDecoder } from 'node:string_decoder';

/** One parsed event. `data` is the raw data text (joined lines). */
export interface SseEvent {
  event: string;
  data: string;
}

export class SseScanner {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';

  /** Feeds a chunk; returns the events it completed. */
  feed(chunk: Buffer): SseEvent[] {
    this.pending += this.decoder.write(chunk);
    const events: SseEvent[] = [];
    for (;;) {
      const m = /\r?\n\r?\n/.exec(this.pending);
      if (!m) break;
      const block = this.pending.slice(0, m.index);
      this.pending = this.pending.slice(m.index + m[0].length);
      const ev = parseBlock(block);
      if (ev) events.push(ev);
    }
    return events;
  }

  /** Bytes received but not yet forming a complete event. */
  hasPartial(): boolean {
    return this.pending.trim().length > 0;
  }
}

function parseBlock(block: string): SseEvent | undefined {
  let event = 'message';
  const data: string[] = [];
  let any = false;
  for (const line of block.split(/\r?\n/)) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') {
      event = value;
      any = true;
    } else if (field === 'data') {
      data.push(value);
      any = true;
    }
  }
  return any ? { event, data: data.join('\n') } : undefined;
}

/** Formats an Anthropic-shaped `event: error` frame. */
export function sseErrorFrame(type: string, message: string): string {
  return `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message } })}\n\n`;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Splits a byte stream at event boundaries (a blank line): complete events are
 * released, a partial event is held until it completes. The relay forwards
 * only complete events, so a stream cut mid-event never leaves half an event
 * glued to the router's own `event: error`. Linear in the input: a chunk with
 * a boundary is released without copying when nothing is held.
 */
export class SseFramer {
  private held: Buffer[] = [];

  /** Bytes of the events this chunk completes (with any held bytes before them), or undefined. */
  push(chunk: Buffer): Buffer | undefined {
    let end = lastBoundaryEnd(chunk);
    if (end < 0 && this.held.length > 0) end = joinBoundaryEnd(this.held[this.held.length - 1], chunk);
    if (end < 0) {
      if (chunk.length > 0) this.held.push(chunk);
      return undefined;
    }
    const head = end === chunk.length ? chunk : chunk.subarray(0, end);
    const out = this.held.length === 0 ? head : Buffer.concat([...this.held, head]);
    this.held = end === chunk.length ? [] : [chunk.subarray(end)];
    return out;
  }

  /** Whether bytes of an unfinished event are held. */
  hasPartial(): boolean {
    return this.held.some((b) => b.length > 0);
  }
}

/** Index just after the last blank line (`\n\n`, `\r\n\r\n`, `\n\r\n`) in `buf`, or -1 (native search). */
function lastBoundaryEnd(buf: Buffer): number {
  const lf = buf.lastIndexOf('\n\n');
  const crlf = buf.lastIndexOf('\n\r\n');
  return Math.max(lf >= 0 ? lf + 2 : -1, crlf >= 0 ? crlf + 3 : -1);
}

/** A blank line split across the end of `prev` and the start of `next`: index in `next` just after it, or -1. */
function joinBoundaryEnd(prev: Buffer, next: Buffer): number {
  const p1 = prev[prev.length - 1];
  const p2 = prev[prev.length - 2];
  if (p1 === LF && next[0] === LF) return 1;
  if (p1 === LF && next[0] === CR && next[1] === LF) return 2;
  if (p1 === CR && p2 === LF && next[0] === LF) return 1;
  return -1;
}

/** An event found in complete SSE bytes: its name, and its data decoded only when asked for. */
export interface ScannedEvent {
  event: string;
  /** The event's data text (joined `data:` lines). Decoded on call. */
  data(): string;
}

/**
 * Reads the events in bytes that hold only complete events (an SseFramer's
 * output). Event names are read from the bytes; data is decoded only for the
 * events the caller asks about, so content deltas cost no string work.
 */
export function scanCompleteEvents(buf: Buffer): ScannedEvent[] {
  const out: ScannedEvent[] = [];
  let pos = 0;
  while (pos < buf.length) {
    let end = buf.indexOf('\n\n', pos);
    const crlf = buf.indexOf('\n\r\n', pos);
    let sep = 2;
    if (crlf >= 0 && (end < 0 || crlf < end)) {
      end = crlf;
      sep = 3;
    }
    if (end < 0) end = buf.length;
    const block = buf.subarray(pos, end + 1);
    pos = end + sep;
    let name: string | undefined;
    let any = false;
    let lineStart = 0;
    while (lineStart < block.length) {
      let lineEnd = block.indexOf(LF, lineStart);
      if (lineEnd < 0) lineEnd = block.length;
      const first = block[lineStart];
      if (first === 0x65 /* e */ && block.toString('latin1', lineStart, lineStart + 6) === 'event:') {
        let v = lineStart + 6;
        if (block[v] === 0x20) v++;
        let e = lineEnd;
        if (block[e - 1] === CR) e--;
        name = block.toString('utf8', v, e);
        any = true;
      } else if (first === 0x64 /* d */) {
        any = true;
      }
      lineStart = lineEnd + 1;
    }
    if (!any) continue;
    out.push({ event: name ?? 'message', data: () => parseBlock(block.toString('utf8').replace(/\r?\n$/, ''))?.data ?? '' });
  }
  return out;
}
