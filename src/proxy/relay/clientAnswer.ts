/**
 * Every answer the router writes to a client, except the events of a relayed
 * stream (streamRelay.ts): local JSON answers, the `/events` change stream, an
 * upstream answer relayed whole, the head that commits an event stream, a held
 * upstream error, and the errors the router makes up in Anthropic's envelope
 * (also for requests Node could not parse).
 */
import { STATUS_CODES, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { anthropicErrorBody, type AnthropicErrorType } from './anthropicError';
import { clientHeaderList } from '../upstream/agent';
import type { UpstreamHead } from '../upstream/call';

/** Header naming the account that served a response (a label, never a token). */
const ACCOUNT_HEADER = 'x-claude-router-account';
/** Header carrying the router's id of the request (the decision record's `requestId`). */
export const REQUEST_ID_HEADER = 'x-claude-router-request-id';

/** A failed upstream answer the client may still receive (when nothing better is left). */
export interface HeldAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The label of the account that answered it. */
  account: string;
}

/** Shared by every answer that uses it; never modified. */
const JSON_HEADERS: Readonly<IncomingHttpHeaders> = { 'content-type': 'application/json' };

/** `value` as a 200 JSON answer that no cache keeps, with `headers` besides. */
export function sendJson(res: ServerResponse, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(200, { ...headers, 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(value));
}

/** A 200 with `json` as its body, or with no body and no content type when `json` is undefined. */
export function sendOk(res: ServerResponse, json?: string): void {
  if (json === undefined) res.writeHead(200);
  else res.writeHead(200, JSON_HEADERS);
  res.end(json);
}

/** `100 Continue`: the client may send the body it announced. */
export function sendContinue(res: ServerResponse): void {
  res.writeContinue();
}

/** Writes a complete Anthropic-shaped error response (no-op if headers were already sent). */
export function sendAnthropicError(res: ServerResponse, status: number, type: AnthropicErrorType, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const body = anthropicErrorBody(type, message);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * An `invalid_request_error` for a request Node could not parse, written on the raw socket (no
 * response object exists for it), which then closes.
 */
export function sendUnparsedError(socket: Duplex, status: number, message: string): void {
  const body = anthropicErrorBody('invalid_request_error', message);
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

/**
 * An error answer the router makes up in Anthropic's envelope, held like an upstream one: for a
 * failure with no HTTP answer of its own (a stream error, a dead connection), or an upstream
 * error whose body cannot be relayed (`headers` are then the upstream's).
 */
export function syntheticAnswer(account: string, status: number, type: string, message: string, headers: IncomingHttpHeaders = JSON_HEADERS): HeldAnswer {
  return { status, headers, body: Buffer.from(anthropicErrorBody(type, message)), account };
}

/** Relays a held upstream error as the client's answer. */
export function sendHeld(res: ServerResponse, held: HeldAnswer, requestId: string): void {
  res.writeHead(held.status, clientHeaderList(held.headers, [ACCOUNT_HEADER, held.account, REQUEST_ID_HEADER, requestId, 'content-length', String(held.body.length)]));
  res.end(held.body);
}

/** Relays a successful upstream answer that was read whole. */
export function sendUpstreamAnswer(res: ServerResponse, head: UpstreamHead, body: Buffer, account: string, requestId: string): void {
  res.writeHead(head.status, clientHeaderList(head.headers, [ACCOUNT_HEADER, account, REQUEST_ID_HEADER, requestId, 'content-length', String(body.length)]));
  res.end(body);
}

/** Commits an event stream: its head, written (not flushed) so it goes out with the first events in one write. */
export function commitStreamHead(res: ServerResponse, head: UpstreamHead, account: string, requestId: string): void {
  res.writeHead(head.status, clientHeaderList(head.headers, [ACCOUNT_HEADER, account, REQUEST_ID_HEADER, requestId]));
}

const CHANGED_EVENT = 'event: changed\ndata: {}\n\n';

/** Opens a `/events` change stream with one `changed` event. */
export function openChangeStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
  res.write(CHANGED_EVENT);
}

/** One `changed` event on a `/events` stream. */
export function sendChanged(res: ServerResponse): void {
  res.write(CHANGED_EVENT);
}

/** The last event of a `/events` stream ended by a key rotation: its reader must present the new key. */
export const KEY_ROTATED_EVENT = 'key-rotated';

/** Ends a `/events` stream: the router is closing, or (`rotated`) the key it was opened with was replaced. */
export function endChangeStream(res: ServerResponse, rotated = false): void {
  res.end(rotated ? `event: ${KEY_ROTATED_EVENT}\ndata: {}\n\n` : undefined);
}
