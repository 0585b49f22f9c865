/**
 * Reading the decision log on disk in pages (decisionQuery.ts), on real files: newest first across
 * rotated files, filtered (session, account, outcome, reason, time span, request id), with cursors that survive a rotation in between and a filter that skips
 * files rotated before `since`.
 */
import { strict as assert } from 'node:assert';
import { appendFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DecisionRecord } from '../../../src/routing/decision';
import { stickyKeyHash } from '../../../src/routing/identify';
import { parseDecisionQuery, readDecisionPage, type DecisionFilter } from '../../../src/proxy/state/decisionQuery';

/** A record with what the filters read; `n` orders them (ts = n seconds after 2026-01-01). */
function record(n: number, over: Partial<DecisionRecord> = {}): DecisionRecord {
  return {
    schemaVersion: 2,
    ts: new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString(),
    requestId: `req-${n}`,
    stickyKeyHash: n % 2 ? 'aaaaaaaaaaaaaaaa' : 'bbbbbbbbbbbbbbbb',
    servedBy: n % 3 ? 'work' : 'home',
    attempts: [{ account: n % 3 ? 'work' : 'home', status: 200, result: 'success', ms: 5 }],
    outcome: 'success',
    selectionReason: 'weekly_reset',
    ...over,
  } as DecisionRecord;
}
const lines = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => JSON.stringify(record(from + i)) + '\n').join('');

describe('decision log pages on disk', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'decision-query-'));
    // Two rotated files (records 0–39 and 40–79) and the current one (80–119).
    writeFileSync(path.join(dir, 'decisions-20260101T000040.jsonl'), lines(0, 40));
    writeFileSync(path.join(dir, 'decisions-20260101T000120.jsonl'), lines(40, 80));
    writeFileSync(path.join(dir, 'decisions.jsonl'), lines(80, 120));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Every page from the newest, as request numbers (each page oldest first, as served). */
  async function allPages(filter: DecisionFilter, limit: number, between?: (page: number) => void): Promise<number[][]> {
    const pages: number[][] = [];
    let before: string | undefined;
    do {
      const page = await readDecisionPage(dir, { filter, limit, before });
      pages.push(page.records.map((r) => Number(r.requestId.slice(4))));
      before = page.next ?? undefined;
      between?.(pages.length);
    } while (before !== undefined);
    return pages;
  }

  it('pages go back through the rotated files, newest page first, each page oldest first', async () => {
    const pages = await allPages({}, 25);
    assert.deepEqual(pages[0], range(95, 120));
    assert.deepEqual(
      pages.flat().sort((a, b) => a - b),
      range(0, 120),
      'every record once',
    );
    assert.deepEqual(
      pages.map((p) => p.length),
      [25, 25, 25, 25, 20],
    );
  });

  it('reads lines that straddle its read chunks whole (a file of about 1 MB)', async () => {
    const pad = 'x'.repeat(700);
    writeFileSync(path.join(dir, 'decisions.jsonl'), Array.from({ length: 1500 }, (_, i) => JSON.stringify({ ...record(80 + i), pad }) + '\n').join(''));
    const pages = await allPages({}, 400);
    assert.deepEqual(
      pages.flat().sort((a, b) => a - b),
      range(0, 1580),
    );
  });

  it('finds a version 1 record (a raw session id) by its session hash', async () => {
    const { stickyKeyHash: _h, stickyKeySource: _s, stickyKind: _k, ...rest } = record(120);
    appendFileSync(path.join(dir, 'decisions.jsonl'), JSON.stringify({ ...rest, schemaVersion: 1, sessionId: 'raw-session' }) + '\n');
    const page = await readDecisionPage(dir, { filter: { session: stickyKeyHash('raw-session').slice(0, 8) }, limit: 10, before: undefined });
    assert.deepEqual(
      page.records.map((r) => r.requestId),
      ['req-120'],
    );
  });

  it('filters by session hash prefix, account (served or tried), outcome, reason and since', async () => {
    assert.deepEqual(
      (await allPages({ session: 'aaaa' }, 500)).flat(),
      range(0, 120).filter((n) => n % 2 === 1),
    );
    assert.deepEqual(
      (await allPages({ account: 'home' }, 500)).flat(),
      range(0, 120).filter((n) => n % 3 === 0),
    );
    assert.deepEqual((await allPages({ outcome: 'no_usable_account' }, 500)).flat(), []);
    assert.deepEqual((await allPages({ reason: 'weekly_reset', sinceMs: Date.UTC(2026, 0, 1) + 100_000 }, 500)).flat(), range(100, 120));
  });

  it('filters by a time span (since and until, both inclusive) and by request id or a prefix of one', async () => {
    const t = (n: number) => Date.UTC(2026, 0, 1) + n * 1000;
    assert.deepEqual(
      (await allPages({ sinceMs: t(30), untilMs: t(45) }, 7)).flat().sort((a, b) => a - b),
      range(30, 46),
      'across a rotation, in pages',
    );
    assert.deepEqual((await allPages({ untilMs: t(4) }, 500)).flat(), range(0, 5));
    assert.deepEqual((await allPages({ request: 'req-57' }, 500)).flat(), [57]);
    assert.deepEqual((await allPages({ request: 'req-11' }, 500)).flat(), [11, ...range(110, 120)]);
    assert.deepEqual((await allPages({ request: 'req-11', untilMs: t(100) }, 500)).flat(), [11]);
  });

  it('skips a rotated file whose rotation came before `since` without reading it', async () => {
    writeFileSync(path.join(dir, 'decisions-20260101T000040.jsonl'), 'not json at all\n'.repeat(10));
    const page = await readDecisionPage(dir, { filter: { sinceMs: Date.UTC(2026, 0, 1) + 41_000 }, limit: 500, before: undefined });
    assert.deepEqual(
      page.records.map((r) => r.requestId),
      range(41, 120).map((n) => `req-${n}`),
    );
  });

  it('a cursor survives a rotation between two pages', async () => {
    const pages = await allPages({}, 30, (n) => {
      if (n !== 1) return;
      // The log rotates after the first page: the current file is renamed, a new one begins.
      renameSync(path.join(dir, 'decisions.jsonl'), path.join(dir, 'decisions-20260101T000200.jsonl'));
      appendFileSync(path.join(dir, 'decisions.jsonl'), lines(120, 130));
    });
    assert.deepEqual(pages[0], range(90, 120));
    assert.deepEqual(
      pages.flat().sort((a, b) => a - b),
      range(0, 120),
      'no record lost or repeated; the newer ones are not in the older pages',
    );
  });

  it('the query string: limit clamped, a bad parameter named', () => {
    assert.deepEqual(parseDecisionQuery('limit=9999&account=work&since=2026-01-01T00:00:00Z'), {
      filter: { account: 'work', sinceMs: Date.UTC(2026, 0, 1) },
      limit: 500,
      before: undefined,
    });
    assert.deepEqual(parseDecisionQuery('since=yesterday'), { error: 'since: expected an ISO-8601 time or epoch milliseconds' });
    assert.deepEqual(parseDecisionQuery('until=1767225600000&request=req_router_x1'), {
      filter: { untilMs: 1767225600000, request: 'req_router_x1' },
      limit: 50,
      before: undefined,
    });
    assert.deepEqual(parseDecisionQuery('until=soon'), { error: 'until: expected an ISO-8601 time or epoch milliseconds' });
    assert.match((parseDecisionQuery('request=a"b') as { error: string }).error, /^request: expected a request id/);
    assert.deepEqual(parseDecisionQuery('session=XYZ'), { error: 'session: expected 4–16 lowercase hex digits of a session key hash' });
    assert.match((parseDecisionQuery('outcome=fine') as { error: string }).error, /^outcome: expected one of success, /);
    // A misspelt reason is refused, not answered with an empty page that reads as "no such decisions".
    assert.match((parseDecisionQuery('reason=session-affinity') as { error: string }).error, /^reason: expected one of availability, .*session_affinity/);
    assert.deepEqual((parseDecisionQuery('reason=weighted_score') as { filter: DecisionFilter }).filter, { reason: 'weighted_score' });
    assert.deepEqual(parseDecisionQuery('before=../../etc'), { error: 'before: expected a cursor from a previous page' });
  });
});

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i);
}
