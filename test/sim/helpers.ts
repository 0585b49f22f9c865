/** Shared helpers for the fake-upstream tests: real HTTP via undici, SSE parsing, a manual clock. */
import { request } from 'undici';
import { startFakeUpstream } from '../../src/sim';
import type { FakeUpstream, FakeUpstreamOptions, SimAccountSpec } from '../../src/sim';

export const BETA = 'oauth-2025-04-20';

/** A clock the test moves by hand (epoch ms). */
export class ManualClock {
  constructor(public t = Date.UTC(2026, 0, 5, 12, 0, 0)) {}
  readonly now = (): number => this.t;
  advance(ms: number): void {
    this.t += ms;
  }
}

export interface Reply {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** Set if the body ended with a transport error (e.g. a cut connection). */
  bodyError?: Error;
  json<T = any>(): T;
}

/** Any HTTP call; the body is read chunk by chunk so a cut stream still yields what arrived. */
export async function call(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string }): Promise<Reply> {
  const r = await request(url, { method: (opts.method ?? 'GET') as 'GET', headers: opts.headers, body: opts.body });
  const chunks: Buffer[] = [];
  let bodyError: Error | undefined;
  try {
    for await (const c of r.body) chunks.push(c as Buffer);
  } catch (e) {
    bodyError = e as Error;
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
  const text = Buffer.concat(chunks).toString('utf8');
  return { status: r.statusCode, headers, text, bodyError, json: () => JSON.parse(text) };
}

/** Headers of a Claude-Code-like OAuth request. */
export function oauthHeaders(token: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    authorization: `Bearer ${token}`,
    'anthropic-beta': `claude-code-20250219,${BETA}`,
    'anthropic-version': '2023-06-01',
    'content-type': 'application/json',
    ...extra,
  };
}

/** A Messages request body. */
export function msgBody(opts: { stream?: boolean; model?: string; messages?: unknown[]; system?: unknown; metadata?: unknown } = {}): string {
  return JSON.stringify({
    model: opts.model ?? 'claude-sonnet-4-5-20250929',
    max_tokens: 1024,
    system: opts.system,
    messages: opts.messages ?? [{ role: 'user', content: 'say hi' }],
    metadata: opts.metadata,
    stream: opts.stream ?? false,
  });
}

/** POST /v1/messages?beta=true as a given token. */
export function postMessage(
  sim: FakeUpstream,
  token: string,
  opts: { stream?: boolean; model?: string; messages?: unknown[]; system?: unknown; session?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const extra: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.session) extra['x-claude-code-session-id'] = opts.session;
  return call(`${sim.url}/v1/messages?beta=true`, { method: 'POST', headers: oauthHeaders(token, extra), body: msgBody(opts) });
}

export interface SseEvt {
  event: string;
  data: any;
}

/** Parse `event: X\ndata: {json}\n\n` frames strictly (throws on anything else). */
export function parseSse(text: string): SseEvt[] {
  const out: SseEvt[] = [];
  const frames = text.split('\n\n');
  if (frames[frames.length - 1] !== '') throw new Error(`stream does not end with a blank line: ${JSON.stringify(text.slice(-40))}`);
  for (const f of frames.slice(0, -1)) {
    const m = /^event: ([a-z_]+)\ndata: (.*)$/.exec(f);
    if (!m) throw new Error(`bad SSE frame ${JSON.stringify(f)}`);
    out.push({ event: m[1], data: JSON.parse(m[2]) });
  }
  return out;
}

/** Two OAuth accounts `a` and `b` plus any extra spec fields for `a`. */
export function twoAccounts(aExtra: Partial<SimAccountSpec> = {}, bExtra: Partial<SimAccountSpec> = {}): SimAccountSpec[] {
  return [
    { label: 'a', accessToken: 'tok-a', refreshToken: 'ref-a', ...aExtra },
    { label: 'b', accessToken: 'tok-b', refreshToken: 'ref-b', ...bExtra },
  ];
}

/** Start a fake for one test and register it for closing. */
export async function withSim(opened: FakeUpstream[], opts: FakeUpstreamOptions): Promise<FakeUpstream> {
  const sim = await startFakeUpstream(opts);
  opened.push(sim);
  return sim;
}

/** Close every fake a test started. */
export async function closeAll(opened: FakeUpstream[]): Promise<void> {
  await Promise.all(opened.splice(0).map((s) => s.close()));
}

/** All `anthropic-ratelimit-*` header names of a reply. */
export function ratelimitHeaderNames(r: Reply): string[] {
  return Object.keys(r.headers).filter((k) => k.startsWith('anthropic-ratelimit-'));
}

export const U = 'anthropic-ratelimit-unified-';
