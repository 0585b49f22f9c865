/**
 * The proxy's per-request steps one by one, in-process, µs per call — to say where the proxy's
 * CPU per request goes beyond what a bare pass-through does. Each step is the real src/ function
 * fed with real inputs: the benchmark's request headers and bodies, and the fake upstream's
 * actual response headers and bytes (one live request to an in-process sim at start).
 *
 * Not measured here (they need sockets): undici's request()/body-stream machinery, node:http,
 * socket writes, GC pressure from the whole pipeline. The HTTP cells measure those as a whole.
 *
 *   node out/bench/hotpath.js [--quick]   (run.ts forks it and receives the rows over IPC)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { startFakeUpstream, simAccounts } from '../src/sim';
import { checkClientKey } from '../src/proxy/http/guard';
import { readClientHead } from '../src/proxy/http/clientHead';
import { inspectRequest } from '../src/proxy/http/requestInfo';
import { RequestBody } from '../src/proxy/http/body';
import { clientHeaderList, upstreamHeaders } from '../src/proxy/upstream/agent';
import { parseUnifiedHeaders, UnifiedHeaderReader } from '../src/quota/headers';
import { mergeByRules, mergeSnapshot } from '../src/quota/merge';
import { modelFamily } from '../src/quota/family';
import { forEachEvent, SseFramer } from '../src/proxy/relay/sse';
import { usageFromJson } from '../src/proxy/relay/answerUsage';
import { identify } from '../src/routing/identify';
import { computeMetrics } from '../src/routing/metrics';
import { planRoute, type PlanAccount } from '../src/routing/plan';
import { DEFAULT_POLICY } from '../src/routing/policy';
import { DecisionLineEncoder } from '../src/routing/decisionLine';
import { buildDecisionRecord, type DecisionRecord, type OutcomeFacts, type RequestFacts } from '../src/routing/decision';
import { DecisionLog } from '../src/proxy/state/decisionLog';
import { claudeCodeBody, claudeCodeHeaders, median } from './common';

export interface HotpathRow {
  step: string;
  /** Median µs per call over samples (JS thread, wall time of a tight loop). */
  us: number;
}

function time(fn: () => unknown, quick: boolean): number {
  const samples = quick ? 5 : 9;
  const sampleMs = quick ? 30 : 100;
  let batch = 1;
  let sink = 0;
  for (;;) {
    const t = performance.now();
    for (let i = 0; i < batch; i++) sink += fn() ? 1 : 0;
    const ms = performance.now() - t;
    if (ms >= sampleMs / 4 || batch >= 1 << 24) {
      batch = Math.max(1, Math.round((batch * sampleMs) / Math.max(ms, 0.001)));
      break;
    }
    batch *= 2;
  }
  const us: number[] = [];
  for (let s = 0; s < samples; s++) {
    const t = performance.now();
    for (let i = 0; i < batch; i++) sink += fn() ? 1 : 0;
    us.push(((performance.now() - t) * 1000) / batch);
  }
  if (sink === -1) process.stdout.write('');
  return median(us);
}

/** Process CPU (all threads) per decision-log append, appends spaced one per macrotask like requests. */
async function decisionLogCost(record: DecisionRecord, n: number): Promise<{ jsUs: number; cpuUs: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'claude-router-hotpath-'));
  const log = new DecisionLog({ dir });
  // Warm up: the file opened, the code optimised, the batch buffers and the recent-lines ring paged in.
  for (let i = 0; i < n; i++) {
    log.append(record);
    if (i % 8 === 0) await new Promise<void>((r) => setImmediate(r));
  }
  let js = 0;
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    log.append(record);
    js += performance.now() - t;
    await new Promise<void>((r) => setImmediate(r));
  }
  await log.close();
  const c = process.cpuUsage(c0);
  // The same loop without appends, to subtract the setImmediate pacing itself.
  const b0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
  const b = process.cpuUsage(b0);
  fs.rmSync(dir, { recursive: true, force: true });
  return { jsUs: (js * 1000) / n, cpuUs: (c.user + c.system - (b.user + b.system)) / n };
}

export async function runHotpath(quick: boolean): Promise<HotpathRow[]> {
  // Real upstream answers: headers of a 200 JSON, and the bytes of a 25-event stream.
  const accounts = simAccounts(3, { fiveHourLimitTokens: 1e15, sevenDayLimitTokens: 1e15 });
  const sim = await startFakeUpstream({ accounts, sseDeltaCount: 19, maxRecords: 10 });
  const small = claudeCodeBody(0, { stream: false, sessionId: 's' });
  const large = claudeCodeBody(250_000, { stream: true, sessionId: 's' });
  const baseHeaders = {
    'content-type': 'application/json',
    'anthropic-version': '2023-06-01',
    'anthropic-beta': 'claude-code-20250219,oauth-2025-04-20,interleaved-thinking-2025-05-14,extended-cache-ttl-2025-04-11',
  };
  const json = await request(`${sim.url}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { ...baseHeaders, authorization: `Bearer ${accounts[0].accessToken}` },
    body: small,
  });
  const jsonBody = Buffer.from(await json.body.arrayBuffer());
  const upHeaders = json.headers as Record<string, string | string[] | undefined>;
  const sse = await request(`${sim.url}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { ...baseHeaders, authorization: `Bearer ${accounts[0].accessToken}` },
    body: JSON.stringify({ ...JSON.parse(small.toString()), stream: true }),
  });
  const sseChunks: Buffer[] = [];
  for await (const c of sse.body) sseChunks.push(c as Buffer);
  const sseBytes = Buffer.concat(sseChunks);
  const sseEvents: Buffer[] = [];
  for (let s = 0, i = sseBytes.indexOf('\n\n'); i !== -1; s = i + 2, i = sseBytes.indexOf('\n\n', s)) sseEvents.push(sseBytes.subarray(s, i + 2));
  await sim.close();

  // The client's request as node:http would give it to the proxy.
  const clientKey = 'bench-client-key-0123456789abcdef';
  const clientHeaders: Record<string, string> = {
    host: '127.0.0.1:48290',
    connection: 'keep-alive',
    'content-length': String(small.length),
    ...baseHeaders,
    accept: 'application/json',
    ...claudeCodeHeaders('b3f0c7a2-5d1e-4c8b-9a6f-000000000001'),
    'x-claude-router-key': clientKey,
  };
  const rawHeaders = Object.entries(clientHeaders).flat();
  const head = readClientHead(rawHeaders);

  // Routing state as the proxy has it in the HTTP cells: 3 accounts, one with fresh evidence.
  const now = Date.now();
  const snapshot = parseUnifiedHeaders(upHeaders, now)!;
  const policy = Object.freeze({ ...DEFAULT_POLICY, sessionAffinity: true });
  const params = { sessionSoftLimit: policy.sessionSoftLimit, sessionResetToleranceMs: policy.sessionResetToleranceMs, allowOverage: false, modelFamily: 'sonnet' };
  const plan3 = () => {
    const acc: PlanAccount[] = ['acct1', 'acct2', 'acct3'].map((id, index) => ({
      id,
      index,
      isPrimary: false,
      fallback: false,
      inflight: 0,
      metrics: computeMetrics({ snapshot: index === 0 ? snapshot : undefined, cooldown: undefined }, params, now),
    }));
    return planRoute({ accounts: acc, policy, sessionId: 's', binding: { account: 'acct1', lastServedAtMs: now }, roundRobinCursor: 0 });
  };
  const plan = plan3();
  const facts: RequestFacts = {
    ts: new Date(now).toISOString(),
    requestId: 'req_router_abcdefghijkl',
    stickyKeySource: 'header',
    stickyKind: 'session',
    stickyKeyHash: '0123456789abcdef',
    path: '/v1/messages',
    model: 'claude-sonnet-4-5-20250929',
    stream: false,
  };
  const outcome: OutcomeFacts = {
    servedBy: 'acct1',
    servedByFallback: false,
    attempts: [{ account: 'acct1', status: 200, result: 'success', ms: 1 }],
    outcome: 'success',
    status: 200,
    usage: { inputTokens: 10, outputTokens: 5, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
    durationMs: 1,
  };
  const record: DecisionRecord = buildDecisionRecord(facts, plan, policy, outcome);

  const rows: HotpathRow[] = [];
  const add = (step: string, fn: () => unknown) => rows.push({ step, us: time(fn, quick) });
  add('readClientHead (one pass over the raw header list)', () => readClientHead(rawHeaders));
  add('checkClientKey (timingSafeEqual)', () => checkClientKey(head, clientKey));
  const smallBody = RequestBody.of(small);
  const largeBody = new RequestBody([large.subarray(0, 65536), large.subarray(65536, 131072), large.subarray(131072, 196608), large.subarray(196608)], large.length);
  add('inspectRequest, small body (head regex)', () => inspectRequest(head.sessionId, smallBody, true));
  add('inspectRequest, 250 KB body in 4 chunks (head regex)', () => inspectRequest(head.sessionId, largeBody, true));
  const headerId = 'b3f0c7a2-5d1e-4c8b-9a6f-000000000001';
  add('identify: session id from the header (one SHA-256 of the id)', () => identify({ headerId, metadataId: null, body: undefined, fingerprint: true }));
  const parsedLarge: unknown = JSON.parse(large.toString('utf8'));
  add('identify: fingerprint of a parsed 250 KB body (no id; bounded head)', () => identify({ headerId: null, metadataId: null, body: parsedLarge, fingerprint: true }));
  add('modelFamily + computeMetrics × 3 + planRoute (plan)', () => (modelFamily('claude-sonnet-4-5-20250929'), plan3()));
  add('upstreamHeaders (copy + credential + betas)', () => upstreamHeaders(head, 'oauth', accounts[0].accessToken));
  add('quota headers of a new answer: parse + mergeSnapshot', () => mergeByRules(snapshot, parseUnifiedHeaders(upHeaders, now)!));
  // As recordEvidence sees them: an account's answers repeat its last answer's headers.
  const reader = new UnifiedHeaderReader();
  let held = mergeSnapshot(undefined, reader.read('acct1', upHeaders, now)!);
  let tick = now;
  add('quota headers repeating the last answer: reader + mergeSnapshot', () => (held = mergeSnapshot(held, reader.read('acct1', upHeaders, ++tick)!)));
  add('clientHeaderList', () => clientHeaderList(upHeaders, ['x-claude-router-account', 'a1']));
  add('usage from a JSON answer (its last member)', () => usageFromJson(jsonBody));
  // A long answer: 40 KB of text before the usage member, which is all that is parsed.
  const answer = JSON.parse(jsonBody.toString('utf8')) as { content: unknown[] };
  const longBody = Buffer.from(JSON.stringify({ ...answer, content: [{ type: 'text', text: 'word '.repeat(8_000) }], usage: (answer as { usage?: unknown }).usage }));
  add(`usage from a JSON answer of ${Math.round(longBody.length / 1024)} KB (its last member)`, () => usageFromJson(longBody));
  add(`the same answer parsed whole (JSON.parse)`, () => JSON.parse(longBody.toString('utf8')));
  // What the stream relay does per chunk: frame whole events, read their names.
  const countEvents = (chunks: Buffer[]) => {
    const framer = new SseFramer();
    let n = 0;
    for (const c of chunks) {
      const complete = framer.push(c);
      if (complete) forEachEvent(complete, () => ++n > 0);
    }
    return n;
  };
  add('SseFramer + forEachEvent over a 25-event stream, one chunk', () => countEvents([sseBytes]));
  add('SseFramer + forEachEvent over a 25-event stream, 25 chunks', () => countEvents(sseEvents));
  add('decision record: buildDecisionRecord + new Date().toISOString()', () => buildDecisionRecord({ ...facts, ts: new Date(now).toISOString() }, plan, policy, outcome));
  const line = JSON.stringify(record);
  add(`decision record: JSON.stringify (${line.length} bytes)`, () => JSON.stringify(record));
  const encoder = new DecisionLineEncoder();
  if (encoder.encode(record) !== line) throw new Error('DecisionLineEncoder differs from JSON.stringify');
  // Two records with equal metrics in distinct objects, as consecutive requests have them.
  const records = [record, buildDecisionRecord(facts, plan, policy, outcome)];
  let turn = 0;
  add('decision record: DecisionLineEncoder, metrics unchanged', () => encoder.encode(records[turn++ & 1]));
  add('decision record: DecisionLineEncoder, metrics changed', () => new DecisionLineEncoder().encode(record));
  const dl = await decisionLogCost(record, quick ? 1_000 : 4_000);
  rows.push({ step: 'DecisionLog.append, JS thread (encode + batch write)', us: dl.jsUs });
  rows.push({ step: 'DecisionLog.append, process CPU incl. fs thread', us: dl.cpuUs });
  return rows;
}

export function formatHotpath(rows: HotpathRow[]): string {
  const w = Math.max(...rows.map((r) => r.step.length));
  return rows.map((r) => `  ${r.step.padEnd(w)}  ${r.us.toFixed(2).padStart(8)} µs`).join('\n');
}

// Entry point only when run as out/bench/hotpath.js (run.ts bundles this module too).
if (/hotpath\.js$/.test(process.argv[1] ?? '')) {
  runHotpath(process.argv.includes('--quick') || process.env.BENCH_QUICK === '1').then(
    (rows) => {
      if (process.send) process.send({ type: 'hotpath', rows });
      else process.stdout.write(formatHotpath(rows) + '\n');
    },
    (err: unknown) => {
      process.stderr.write(`hotpath failed: ${(err as Error).stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
