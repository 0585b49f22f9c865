/**
 * Anthropic's error envelope (`{"type":"error","error":{"type":…,"message":…}}`,
 * docs/anthropic-api.md#error-envelope): the router answers its own errors in it, so Claude
 * Code's recovery logic reads them like upstream errors. They are written by
 * clientAnswer.ts.
 */

/** Anthropic error types the router uses. */
export type AnthropicErrorType =
  'invalid_request_error' | 'authentication_error' | 'permission_error' | 'not_found_error' | 'request_too_large' | 'rate_limit_error' | 'api_error' | 'overloaded_error';

/**
 * The JSON body of an Anthropic error. `type` is one of {@link AnthropicErrorType}, or a type
 * an upstream `event: error` named, passed on as it came.
 */
export function anthropicErrorBody(type: AnthropicErrorType | (string & {}), message: string): string {
  return JSON.stringify({ type: 'error', error: { type, message } });
}
