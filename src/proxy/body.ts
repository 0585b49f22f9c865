/**
 * Reads a client's request body into one Buffer (kept until the request is
 * served: failover resends it), refusing bodies over the limit as soon as the
 * limit is crossed rather than after buffering them.
 */
import type { IncomingMessage } from 'node:http';

/** Anthropic refuses requests above 32 MB (anthropic-wire.md §2); so do we, locally. */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

export class BodyTooLargeError extends Error {}

/**
 * @throws BodyTooLargeError when `content-length` or the bytes received exceed `limit`
 * @throws Error when the client aborts mid-body
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(new BodyTooLargeError());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        chunks.length = 0;
        reject(new BodyTooLargeError());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!failed) resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    });
    req.on('error', (err) => {
      if (!failed) reject(err);
      failed = true;
    });
    req.on('aborted', () => {
      if (!failed) reject(new Error('client aborted'));
      failed = true;
    });
  });
}
