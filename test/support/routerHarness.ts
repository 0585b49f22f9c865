/**
 * Starts a fake Anthropic upstream and the real router (startRouter, real
 * sockets, a temp state directory) and offers small helpers to call it the
 * way Claude Code does.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { startFakeUpstream, type FakeUpstream, type FakeUpstreamOptions, type SimAccountSpec } from '../../src/sim';
import { startRouter, type RunningRouter } from '../../src/cli/runtime';
import type { ConfigInput } from '../../src/config/schema';
import { silentLogger, type Logger } from '../../src/proxy/log';
import type { DecisionRecord } from '../../src/routing/decision';
import { byRotationOrder } from '../../src/proxy/state/decisionFiles';
import { MemoryCredentialStore } from '../../src/accounts/memoryCredentialStore';
import { policyFrom } from '../../src/config/schema';
import { createRouter, type Router, type RouterOptions } from '../../src/proxy/createRouter';

export interface Harness {
  sim: FakeUpstream;
  router: RunningRouter;
  stateDir: string;
  close(): Promise<void>;
  decisions(): DecisionRecord[];
}

/** Three plain accounts a, b, c with refresh tokens. */
export function accounts(...labels: string[]): SimAccountSpec[] {
  return labels.map((l) => ({ label: l, accessToken: `sk-ant-oat01-test-${l}`, refreshToken: `sk-ant-ort01-test-${l}` }));
}

export async function startHarness(
  spec: SimAccountSpec[],
  opts: {
    sim?: Partial<FakeUpstreamOptions>;
    routing?: ConfigInput['routing'];
    configAccounts?: ConfigInput['accounts'];
    env?: NodeJS.ProcessEnv;
    log?: Logger;
    /** The router's clock, epoch ms (default Date.now); give the sim the same one through `sim.now`. */
    now?: () => number;
    /** The token endpoint the router refreshes at (default the sim's): given the sim's, for a test's own endpoint in front of it. */
    tokenUrl?: (simTokenUrl: string) => string;
  } = {},
): Promise<Harness> {
  const sim = await startFakeUpstream({ accounts: spec, ...opts.sim });
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'router-test-'));
  const router = await startRouter({
    config: {
      listen: { host: '127.0.0.1', port: 0 },
      upstream: { baseUrl: sim.url, tokenUrl: opts.tokenUrl?.(sim.tokenUrl) ?? sim.tokenUrl },
      stateDir,
      clientKey: 'test-client-key-0123456789',
      accounts: opts.configAccounts ?? spec.map((a) => ({ label: a.label, accessToken: a.accessToken, refreshToken: a.refreshToken })),
      routing: opts.routing,
    },
    log: opts.log ?? silentLogger,
    pollUsage: false, // tests drive the poller by hand
    env: opts.env ?? {},
    now: opts.now,
  });
  return {
    sim,
    router,
    stateDir,
    async close() {
      await router.close();
      await sim.close();
      rmSync(stateDir, { recursive: true, force: true });
    },
    decisions: () => readDecisions(stateDir),
  };
}

/**
 * A router built by createRouter (as the extension builds one) in front of a fake upstream,
 * with the sim's accounts in a memory credential store; `decisionDir` holds its decision log.
 */
export async function createSimRouter(
  sim: FakeUpstream,
  spec: SimAccountSpec[],
  opts: { decisionDir: string; routing?: ConfigInput['routing'] } & Partial<Pick<RouterOptions, 'stateFile' | 'saveState' | 'listen'>>,
): Promise<Router> {
  const credentials = new MemoryCredentialStore();
  for (const a of spec) await credentials.set(a.label, { accessToken: a.accessToken, refreshToken: a.refreshToken });
  return createRouter({
    config: { policy: policyFrom(opts.routing, {}), accounts: spec.map((a) => ({ label: a.label, kind: 'oauth', fallback: false, enabled: true })), upstreamBaseUrl: sim.url },
    credentials,
    tokenUrl: sim.tokenUrl,
    clientKey: 'test-client-key-0123456789',
    log: silentLogger,
    decisionDir: opts.decisionDir,
    stateFile: opts.stateFile,
    saveState: opts.saveState,
    listen: opts.listen,
  });
}

/** The decision records a router has written to `stateDir` so far (the log flushes every 100 ms), oldest first. */
export function readDecisions(stateDir: string): DecisionRecord[] {
  return readdirSync(stateDir)
    .filter((f) => /^decisions.*\.jsonl$/.test(f))
    .sort(byRotationOrder)
    .flatMap((f) => readFileSync(path.join(stateDir, f), 'utf8').split('\n'))
    .filter(Boolean)
    .map((l) => JSON.parse(l) as DecisionRecord);
}

export interface CallResult {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** SSE event names in order (for streamed answers). */
  events: string[];
  bodyError?: Error;
}

/** A Claude-Code-shaped messages body. */
export function messagesBody(opts: { stream?: boolean; model?: string; text?: string; userId?: string } = {}): string {
  return JSON.stringify({
    model: opts.model ?? 'claude-sonnet-4-5-20250929',
    max_tokens: 1024,
    messages: [{ role: 'user', content: opts.text ?? 'say hi' }],
    system: [{ type: 'text', text: 'You are Claude Code.' }],
    metadata: opts.userId ? { user_id: opts.userId } : undefined,
    stream: opts.stream ?? false,
  });
}

export async function callRouter(
  h: Pick<Harness, 'router'>,
  opts: { path?: string; method?: string; session?: string; body?: string; headers?: Record<string, string>; signal?: AbortSignal; key?: string | null } = {},
): Promise<CallResult> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'anthropic-version': '2023-06-01',
    'anthropic-beta': 'claude-code-20250219',
    ...(opts.session ? { 'x-claude-code-session-id': opts.session } : {}),
    ...(opts.key === null ? {} : { authorization: `Bearer ${opts.key ?? h.router.clientKey}` }),
    ...opts.headers,
  };
  const method = opts.method ?? 'POST';
  const res = await request(`${h.router.url}${opts.path ?? '/v1/messages?beta=true'}`, {
    method: method as 'POST',
    headers,
    body: method === 'GET' || method === 'HEAD' ? undefined : (opts.body ?? messagesBody()),
    signal: opts.signal,
  });
  const chunks: Buffer[] = [];
  let bodyError: Error | undefined;
  try {
    for await (const c of res.body) chunks.push(c as Buffer);
  } catch (e) {
    bodyError = e as Error;
  }
  const text = Buffer.concat(chunks).toString('utf8');
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  const events = [...text.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
  return { status: res.statusCode, headers: out, text, events, bodyError };
}

/** `/status` of the running router. */
export async function routerStatus(h: Pick<Harness, 'router'>): Promise<any> {
  const res = await request(`${h.router.url}/status`, { headers: { 'x-claude-router-key': h.router.clientKey } });
  return res.body.json();
}

/** Waits until `cond` holds (polling), or throws after `ms`. */
export async function eventually(cond: () => boolean | Promise<boolean>, ms = 3000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}
