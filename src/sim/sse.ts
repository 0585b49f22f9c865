/**
 * Anthropic Messages streaming: event payloads and `event: X\ndata: {json}\n\n` framing.
 */
import type { SimUsage } from './types';

/** One SSE event: name and JSON payload. */
export interface SseEvent {
  event: string;
  data: unknown;
}

/** Frame one event exactly as the API does: `event: X\ndata: {json}\n\n`. */
export function frameEvent(e: SseEvent): string {
  return `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
}

/**
 * Split `text` into `pieces` consecutive parts (by code point, sizes differ by at most 1) that
 * concatenate to `text`. Parts are empty only when `pieces` exceeds the text's length.
 */
export function splitText(text: string, pieces: number): string[] {
  const cps = Array.from(text);
  const n = Math.max(1, Math.floor(pieces));
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    out.push(cps.slice(Math.floor((i * cps.length) / n), Math.floor(((i + 1) * cps.length) / n)).join(''));
  }
  return out;
}

/** The standard Messages API error envelope object. */
export function errorObject(type: string, message: string): { type: 'error'; error: { type: string; message: string } } {
  return { type: 'error', error: { type, message } };
}

/** What a streamed or JSON answer needs. */
export interface AnswerSpec {
  /** Message id (`msg_sim_…`). */
  id: string;
  model: string;
  text: string;
  /** Final usage (output_tokens is the full count). */
  usage: SimUsage;
}

/** `message_start` payload: empty content, stop_reason null, output_tokens 1. */
export function messageStartEvent(a: AnswerSpec): SseEvent {
  return {
    event: 'message_start',
    data: {
      type: 'message_start',
      message: {
        id: a.id,
        type: 'message',
        role: 'assistant',
        model: a.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: a.usage.input_tokens,
          cache_creation_input_tokens: a.usage.cache_creation_input_tokens,
          cache_read_input_tokens: a.usage.cache_read_input_tokens,
          output_tokens: 1,
        },
      },
    },
  };
}

/** `content_block_start` of text block 0. */
export function contentBlockStartEvent(): SseEvent {
  return { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } };
}

/** `ping`. */
export function pingEvent(): SseEvent {
  return { event: 'ping', data: { type: 'ping' } };
}

/** One `text_delta` on block 0. */
export function textDeltaEvent(text: string): SseEvent {
  return { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } } };
}

/** `event: error` with the standard envelope. */
export function errorEvent(type: string, message: string): SseEvent {
  return { event: 'error', data: errorObject(type, message) };
}

/**
 * The full successful stream: message_start → content_block_start → ping →
 * content_block_delta × deltaCount → content_block_stop → message_delta → message_stop.
 */
export function successEvents(a: AnswerSpec, deltaCount: number): SseEvent[] {
  return [
    messageStartEvent(a),
    contentBlockStartEvent(),
    pingEvent(),
    ...splitText(a.text, deltaCount).map(textDeltaEvent),
    { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
    {
      event: 'message_delta',
      data: { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: a.usage.output_tokens } },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ];
}

/** The non-streaming answer object. */
export function messageObject(a: AnswerSpec): Record<string, unknown> {
  return {
    id: a.id,
    type: 'message',
    role: 'assistant',
    model: a.model,
    content: [{ type: 'text', text: a.text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { ...a.usage },
  };
}
