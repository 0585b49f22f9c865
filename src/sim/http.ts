/**
 * Small node:http helpers for the sim: body reading with a size cap, header flattening,
 * one-response context that records the status it sends.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { SimRequestRecord } from './types';
import { errorObject } from './sse';

/** Largest request body the API accepts, bytes (32 MB); larger gets 413 request_too_large. */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

/** Read the whole body; beyond `maxBytes` the rest is drained and `tooLarge` set. Null if the client went away. */
export async function readBody(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<{ buf: Buffer; bytes: number; tooLarge: boolean } | null> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of req) {
      const b = chunk as Buffer;
      bytes += b.length;
      if (bytes <= maxBytes) chunks.push(b);
    }
  } catch {
    return null;
  }
  return { buf: Buffer.concat(chunks), bytes, tooLarge: bytes > maxBytes };
}

/** Headers as name → value (names are already lower-case; repeated values joined with ', '). */
export function flattenHeaders(h: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** Whether a comma-separated `anthropic-beta` value contains `flag`. */
export function betaIncludes(value: string | undefined, flag: string): boolean {
  if (!value) return false;
  return value.split(',').some((s) => s.trim() === flag);
}

/** One request being answered; every status sent is written into its record. */
export class Exchange {
  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    /** Null for control requests (not recorded). */
    readonly record: SimRequestRecord | null,
    /** Value for the `request-id` header. */
    readonly requestId: string,
    /** How many recorded requests have arrived so far: noted in the record when the head is sent. */
    private readonly arrivals: () => number = () => 0,
  ) {}

  /** True once the client is gone or the response is over. */
  get gone(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }

  /** Send status and headers (adds `request-id`). */
  head(status: number, headers: Record<string, string | number>, reason?: string): void {
    if (this.record) {
      this.record.status = status;
      this.record.answeredAfter = this.arrivals();
    }
    if (this.gone || this.res.headersSent) return;
    const h = { 'request-id': this.requestId, ...headers };
    if (reason) this.res.writeHead(status, reason, h);
    else this.res.writeHead(status, h);
  }

  /** Write a chunk; resolves when handed to the socket (false if the client is gone). */
  write(chunk: string | Buffer): Promise<boolean> {
    if (this.gone) return Promise.resolve(false);
    return new Promise((resolve) => {
      try {
        this.res.write(chunk, (err) => resolve(!err));
      } catch {
        resolve(false);
      }
    });
  }

  /** End the response normally. */
  end(chunk?: string | Buffer): void {
    if (this.gone) return;
    if (chunk !== undefined) this.res.end(chunk);
    else this.res.end();
  }

  /** Cut the connection (an unterminated body). */
  cut(): void {
    this.res.destroy();
  }

  /** A complete JSON answer. */
  json(status: number, body: unknown, headers: Record<string, string | number> = {}, reason?: string): void {
    const text = JSON.stringify(body);
    this.head(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers }, reason);
    this.end(text);
  }

  /** An Anthropic error envelope `{"type":"error","error":{type,message}}`. */
  error(status: number, type: string, message: string, headers: Record<string, string | number> = {}, reason?: string): void {
    this.json(status, errorObject(type, message), headers, reason);
  }
}
