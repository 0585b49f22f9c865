/**
 * Token usage read from upstream answers: the `usage` object of a JSON
 * message, and of an event stream's `message_start` and `message_delta`
 * events (docs/anthropic-api.md#streaming; a delta's counts are cumulative and replace
 * the start's).
 */
import type { UsageRecord } from '../../routing/decision';

/**
 * Usage from a JSON answer: null when it has none, undefined when the body is not JSON at all.
 * A Messages answer usually ends with its `usage` member (docs/anthropic-api.md#streaming), so an
 * answer of the shape `{…,"usage":{…}}` is read through that member alone — not through a parse of
 * its whole content, which can be hundreds of kilobytes; any other body is parsed whole.
 */
export function usageFromJson(body: Buffer): UsageRecord | null | undefined {
  const last = lastMemberUsage(body);
  if (last) return toUsage(last, null);
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  const usage = json && typeof json === 'object' ? (json as Record<string, unknown>).usage : undefined;
  return usage && typeof usage === 'object' ? toUsage(usage as Record<string, unknown>, null) : null;
}

/** Usage from one event's data, applied over `prev`; `prev` when the event carries none. */
export function usageFromEvent(event: 'message_start' | 'message_delta', data: string, prev: UsageRecord | null): UsageRecord | null {
  const u = lastUsageObject(data) ?? usageOf(event, parseObject(data));
  return u ? toUsage(u, prev) : prev;
}

function usageOf(event: 'message_start' | 'message_delta', json: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const u = event === 'message_start' ? (json?.message as Record<string, unknown> | undefined)?.usage : json?.usage;
  return u && typeof u === 'object' ? (u as Record<string, unknown>) : undefined;
}

const USAGE_KEY = '"usage":';

/**
 * The `usage` object of an event, parsed alone: it is the event's last member (message_start
 * ends `…,"usage":{…}}}`, message_delta `…,"usage":{…}}`), so the text after the last
 * `"usage":` up to its matching brace is the whole object — a fraction of the event to parse.
 * Undefined when the text does not have that shape (the caller then parses the whole event).
 */
function lastUsageObject(data: string): Record<string, unknown> | undefined {
  const at = data.lastIndexOf(USAGE_KEY);
  if (at < 0 || data.charCodeAt(at + USAGE_KEY.length) !== 0x7b /* { */) return undefined;
  const end = data.indexOf('}', at);
  // Usage holds numbers, short strings and one level of nested objects: find the brace that closes it.
  let close = end;
  for (let open = data.indexOf('{', at + USAGE_KEY.length + 1); open >= 0 && open < close; open = data.indexOf('{', open + 1)) {
    close = data.indexOf('}', close + 1);
    if (close < 0) return undefined;
  }
  if (close < 0) return undefined;
  return parseObject(data.slice(at + USAGE_KEY.length, close + 1));
}

const USAGE_KEY_BYTES = Buffer.from(USAGE_KEY);

/**
 * The `usage` object of a JSON answer when it is the answer's last top-level member: the body
 * starts with `{`, and after the object that follows the last `"usage":` comes only the `}` that
 * ends the answer (a `"usage":` key nested in the content, a tool's input say, is followed by more
 * closing brackets). Undefined for any other shape (the caller parses the whole body).
 */
function lastMemberUsage(body: Buffer): Record<string, unknown> | undefined {
  let first = 0;
  while (first < body.length && isJsonSpace(body[first])) first++;
  if (body[first] !== 0x7b /* { */) return undefined;
  const at = body.lastIndexOf(USAGE_KEY_BYTES);
  if (at <= first) return undefined;
  let end = body.length;
  while (end > at && isJsonSpace(body[end - 1])) end--;
  // The answer's closing brace, then the usage object's, before it.
  if (body[end - 1] !== 0x7d /* } */) return undefined;
  let close = end - 2;
  while (close > at && isJsonSpace(body[close])) close--;
  if (body[close] !== 0x7d) return undefined;
  // The member's text is one object, `{` to `}`: parsing it proves that (a truncated or nested tail fails).
  return parseObject(body.toString('utf8', at + USAGE_KEY.length, close + 1));
}

/** JSON's whitespace (RFC 8259 §2). */
function isJsonSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/** The `error.type` of an `event: error`'s data, or `api_error` when unreadable. */
export function streamErrorType(data: string): string {
  const error = parseObject(data)?.error;
  const type = error && typeof error === 'object' ? (error as Record<string, unknown>).type : undefined;
  return typeof type === 'string' ? type : 'api_error';
}

/** A JSON object, or undefined for anything else (garbage, arrays, scalars). */
function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

function toUsage(u: Record<string, unknown>, prev: UsageRecord | null): UsageRecord {
  return {
    inputTokens: u.input_tokens !== undefined ? num(u.input_tokens) : (prev?.inputTokens ?? 0),
    outputTokens: u.output_tokens !== undefined ? num(u.output_tokens) : (prev?.outputTokens ?? 0),
    cacheCreationInputTokens: u.cache_creation_input_tokens !== undefined ? num(u.cache_creation_input_tokens) : (prev?.cacheCreationInputTokens ?? 0),
    cacheReadInputTokens: u.cache_read_input_tokens !== undefined ? num(u.cache_read_input_tokens) : (prev?.cacheReadInputTokens ?? 0),
  };
}
