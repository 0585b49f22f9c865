/**
 * Private session keys: a small soak through the real router with Claude-Code-like requests
 * whose raw session ids and stable heads are known, then a scan of everything the router wrote
 * or answered — decisions.jsonl, router-state.json, `/status`, `/decisions`, `/events`, every
 * log line and the panel's report — for any raw id or fingerprint input.
 */
import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { request } from 'undici';
import type { Logger } from '../../src/proxy/log';
import { readDecisionRecord } from '../../src/routing/decisionRead';
import { stickyKeyHash } from '../../src/routing/identify';
import { computeReport } from '../../src/routing/report';
import { accounts, callRouter, startHarness } from '../support/routerHarness';

const CONVERSATIONS = 12;
const TURNS = 4;

interface Conversation {
  /** How the client names it: a header id, a `metadata.user_id` id, or nothing (a fingerprint). */
  via: 'header' | 'metadata' | 'none';
  id: string;
  system: string;
  opening: string;
}

/** The body of a conversation's turn `n` (0-based): the opening message, then n answered turns. */
function turnBody(c: Conversation, n: number): string {
  const messages: unknown[] = [{ role: 'user', content: [{ type: 'text', text: c.opening }] }];
  for (let i = 0; i < n; i++) messages.push({ role: 'assistant', content: `answer ${i}` }, { role: 'user', content: `follow-up ${i}` });
  const last = messages[messages.length - 1] as { content: unknown };
  last.content = [{ type: 'text', text: typeof last.content === 'string' ? last.content : c.opening, cache_control: { type: 'ephemeral' } }];
  return JSON.stringify({
    model: 'claude-sonnet-4-5-20250929',
    max_tokens: 64,
    stream: n % 2 === 0,
    system: [{ type: 'text', text: c.system, cache_control: { type: 'ephemeral' } }],
    tools: [{ name: 'Read', input_schema: { type: 'object' } }],
    messages,
    metadata: c.via === 'metadata' ? { user_id: JSON.stringify({ device_id: 'd'.repeat(64), account_uuid: '', session_id: c.id }) } : undefined,
  });
}

describe('private session keys: nothing the router writes or shows holds a raw session id or fingerprint input', function () {
  this.timeout(60_000);

  it('a soak of header, metadata and id-less conversations leaves only hashes everywhere', async () => {
    const logLines: string[] = [];
    const capture = (m: string) => logLines.push(m);
    const log: Logger = { debug: capture, info: capture, warn: capture, error: capture, debugEnabled: () => true };
    const h = await startHarness(accounts('a', 'b', 'c'), { sim: { sseDeltaCount: 3 }, routing: { sessionAffinity: true }, log });
    const conversations: Conversation[] = Array.from({ length: CONVERSATIONS }, (_, i) => ({
      via: (['header', 'metadata', 'none'] as const)[i % 3],
      id: `raw-session-${randomUUID()}`,
      system: `SYSTEM PROMPT ${randomUUID()} — you are agent ${i}`,
      opening: `OPENING MESSAGE ${randomUUID()}`,
    }));
    let events = '';
    let statusText: string;
    let decisionsText: string;
    let stateText: string;
    let logText: string;
    try {
      const key = { 'x-claude-router-key': h.router.clientKey };
      const stream = await request(`${h.router.url}/events`, { headers: key });
      const eventsDone = (async () => {
        for await (const chunk of stream.body) events += (chunk as Buffer).toString('utf8');
      })().catch(() => undefined);

      h.sim.injectFault('a', { kind: 'throttle', retryAfterS: 1 }); // a failover and a cooldown in the logs too
      await Promise.all(
        conversations.map(async (c) => {
          for (let n = 0; n < TURNS; n++) {
            const r = await callRouter(h, { session: c.via === 'header' ? c.id : undefined, body: turnBody(c, n) });
            assert.equal(r.status, 200, r.text);
          }
        }),
      );
      statusText = await (await request(`${h.router.url}/status`, { headers: key })).body.text();
      decisionsText = await (await request(`${h.router.url}/decisions?limit=500`, { headers: key })).body.text();
      await h.router.close(); // flushes the decision log and saves the state, ends /events
      await eventsDone;
      stateText = readFileSync(path.join(h.stateDir, 'router-state.json'), 'utf8');
      logText = readdirSync(h.stateDir)
        .filter((f) => /^decisions.*\.jsonl$/.test(f))
        .map((f) => readFileSync(path.join(h.stateDir, f), 'utf8'))
        .join('');
    } finally {
      await h.close();
    }

    const decisions = logText
      .split('\n')
      .filter(Boolean)
      .map((l) => readDecisionRecord(JSON.parse(l))!);
    const panelReport = JSON.stringify(computeReport(decisions));
    const written = {
      'decisions.jsonl': logText,
      'router-state.json': stateText,
      '/status': statusText,
      '/decisions': decisionsText,
      '/events': events,
      logs: logLines.join('\n'),
      'panel report': panelReport,
    };
    for (const c of conversations) {
      for (const secret of [c.id, c.system, c.opening]) {
        for (const [where, text] of Object.entries(written)) assert.ok(!text.includes(secret), `${where} holds ${secret}`);
      }
    }
    assert.ok(
      logLines.some((l) => l.startsWith('decision ')),
      'the debug decision lines were captured',
    );

    // What is there instead: one hash per conversation, named by its source, and a binding each.
    assert.equal(decisions.length, CONVERSATIONS * TURNS);
    const status = JSON.parse(statusText) as { sessions: { sessionId: string }[] };
    const bound = new Set(status.sessions.map((s) => s.sessionId));
    const saved = new Set((JSON.parse(stateText) as { bindings: { sessionId: string }[] }).bindings.map((b) => b.sessionId));
    for (const c of conversations.filter((x) => x.via !== 'none')) {
      const mine = decisions.filter((d) => d.stickyKeyHash === stickyKeyHash(c.id));
      assert.deepEqual(
        mine.map((d) => [d.stickyKeySource, d.stickyKind]),
        Array.from({ length: TURNS }, () => [c.via, 'session']),
        `every turn of the ${c.via} conversation carries its id's hash`,
      );
      assert.ok(bound.has(stickyKeyHash(c.id)) && saved.has(stickyKeyHash(c.id)), `the ${c.via} conversation is bound by its hash`);
    }
    const fingerprinted = decisions.filter((d) => d.stickyKeySource === 'fingerprint');
    assert.equal(fingerprinted.length, (CONVERSATIONS / 3) * TURNS, 'every turn without an id got a fingerprint key');
    assert.equal(new Set(fingerprinted.map((d) => d.stickyKeyHash)).size, CONVERSATIONS / 3, 'one key per id-less conversation, stable over its turns');
    for (const d of fingerprinted) assert.equal(d.stickyKind, 'conversation');
    for (const hash of new Set(fingerprinted.map((d) => d.stickyKeyHash))) {
      const turns = fingerprinted.filter((d) => d.stickyKeyHash === hash);
      assert.deepEqual(
        turns.map((d) => d.affinity.sessionBound),
        [false, ...Array.from({ length: TURNS - 1 }, () => true)],
        'every later turn of an id-less conversation finds its binding',
      );
      assert.ok(bound.has(hash!), 'and is bound by its fingerprint hash');
    }
  });

  it('session-fingerprint: false: a request without an id gets no key and no binding; ids still count', async () => {
    const h = await startHarness(accounts('a', 'b'), { routing: { sessionAffinity: true, sessionFingerprint: false } });
    try {
      const c: Conversation = { via: 'none', id: '', system: 'a system prompt', opening: 'an opening' };
      for (let n = 0; n < 2; n++) assert.equal((await callRouter(h, { body: turnBody(c, n) })).status, 200);
      assert.equal((await callRouter(h, { session: 'with-an-id', body: turnBody(c, 0) })).status, 200);
      await h.router.close();
      assert.deepEqual(
        h.decisions().map((d) => [d.stickyKeySource, d.stickyKind, d.stickyKeyHash]),
        [
          ['none', 'none', null],
          ['none', 'none', null],
          ['header', 'session', stickyKeyHash('with-an-id')],
        ],
      );
    } finally {
      await h.close();
    }
  });
});
