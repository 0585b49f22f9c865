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
