/**
 * Errors the router answers itself, in Anthropic's envelope
 * (`{"type":"error","error":{"type":…,"message":…}}`, anthropic-wire.md §2),
 * so Claude Code's recovery logic reads them like upstream errors.
 */
import type { ServerResponse } from 'node:http';

/** Anthropic error types the router uses. */
export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'overloaded_error';

/**
 * The JSON body of an Anthropic error. `type` is one of {@link AnthropicErrorType}, or a type
 * an upstream `event: error` named, passed on as it came.
 */
export function anthropicErrorBody(type: AnthropicErrorType | (string & {}), message: string): string {
  return JSON.stringify({ type: 'error', error: { type, message } });
}

/** Writes a complete Anthropic-shaped error response (no-op if headers were already sent). */
export function sendAnthropicError(
  res: ServerResponse,
  status: number,
  type: AnthropicErrorType,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  const body = anthropicErrorBody(type, message);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
