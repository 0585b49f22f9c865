/**
 * Reading the decision log on disk, newest first, filtered and in pages: what `GET /decisions`
 * serves (the VS Code views and `claude-router decisions`). The log is `decisions.jsonl` and its
 * rotated files (decisionLog.ts); each file is read backwards in chunks, so a page costs what it
 * reads, not the size of the log. A page's cursor names a file by its inode (which a rotation's
 * rename keeps) and a byte offset in it, so paging survives a rotation in between.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { DECISION_OUTCOMES, type DecisionOutcome, type DecisionRecord } from '../../routing/decision';
import { SELECTION_REASONS, type SelectionReason } from '../../routing/planner/types';
import { readDecisionRecord } from '../../routing/decisionRead';
import { MAX_LOG_LINE_BYTES } from '../../routing/logLines';
import { byRotationOrder, ROTATED } from './decisionFiles';

/** Which decisions to return; every given field must match. */
export interface DecisionFilter {
  /** A sticky-key hash, or a prefix of one (lowercase hex, 4–16 digits). */
  session?: string;
  /** An account label: the account served the request or was tried for it. */
  account?: string;
  outcome?: DecisionOutcome;
  /** The selection reason (`session_affinity`, `weekly_reset`, …). */
  reason?: string;
  /** Only requests that arrived at or after this time, epoch ms. */
  sinceMs?: number;
  /** Only requests that arrived at or before this time, epoch ms. */
  untilMs?: number;
  /** The router's request id (`x-claude-router-request-id` of an answer), or a prefix of one. */
  request?: string;
}

/** One page: records oldest first, and the cursor of the page before them (null when there is none). */
export interface DecisionPage {
  records: DecisionRecord[];
  next: string | null;
}

/** Bytes read per step backwards through a file. */
const CHUNK_BYTES = 256 * 1024;
/** The most bytes one page reads before it returns what it found (with a cursor to go on), so a rare match never reads the whole log in one request. */
const MAX_SCAN_BYTES = 64 * 1024 * 1024;
const CURSOR = /^(\d+):(\d+)$/;

/** Whether `r` matches every field of `f`. */
export function matchesFilter(r: DecisionRecord, f: DecisionFilter): boolean {
  if (f.session !== undefined && !(r.stickyKeyHash ?? '').startsWith(f.session)) return false;
  if (f.account !== undefined && r.servedBy !== f.account && !r.attempts.some((a) => a.account === f.account)) return false;
  if (f.outcome !== undefined && r.outcome !== f.outcome) return false;
  if (f.reason !== undefined && r.selectionReason !== f.reason) return false;
  if (f.sinceMs !== undefined && Date.parse(r.ts) < f.sinceMs) return false;
  if (f.untilMs !== undefined && Date.parse(r.ts) > f.untilMs) return false;
  if (f.request !== undefined && !r.requestId.startsWith(f.request)) return false;
  return true;
}

/**
 * The bytes a record's line must contain to match `f` (its account as a JSON string, …): tested on
 * the raw line before it is decoded and parsed, so a filter that matches few records reads a
 * large log faster. Not the session: a version 1 line holds the raw id, hashed only when read.
 */
function needles(f: DecisionFilter): Buffer[] {
  const out: string[] = [];
  if (f.account !== undefined) out.push(JSON.stringify(f.account));
  if (f.outcome !== undefined) out.push(`"${f.outcome}"`);
  if (f.reason !== undefined) out.push(`"${f.reason}"`);
  if (f.request !== undefined) out.push(JSON.stringify(f.request).slice(0, -1)); // the opening quote and the prefix
  return out.map((n) => Buffer.from(n));
}

/** A `/decisions` query: the filter, the page size and the cursor. */
export interface DecisionQuery {
  filter: DecisionFilter;
  /** 1–500. */
  limit: number;
  /** A cursor from a previous page, or undefined for the newest records. */
  before: string | undefined;
}

/**
 * Parses the query string of `/decisions`: `limit` (1–500, default 50; a number out of range is
 * clamped), `session`, `account`, `outcome`, `reason`, `since` and `until` (ISO-8601 or epoch ms,
 * both inclusive), `request` (a request id or a prefix of one), `before`.
 * @returns the query, or an error naming the parameter and the reason
 */
export function parseDecisionQuery(query: string): DecisionQuery | { error: string } {
  const p = new URLSearchParams(query);
  const filter: DecisionFilter = {};
  const session = p.get('session');
  if (session !== null) {
    if (!/^[0-9a-f]{4,16}$/.test(session)) return { error: 'session: expected 4–16 lowercase hex digits of a session key hash' };
    filter.session = session;
  }
  const account = p.get('account');
  if (account !== null) filter.account = account;
  const outcome = p.get('outcome');
  if (outcome !== null) {
    if (!DECISION_OUTCOMES.includes(outcome as DecisionOutcome)) return { error: `outcome: expected one of ${DECISION_OUTCOMES.join(', ')}` };
    filter.outcome = outcome as DecisionOutcome;
  }
  const reason = p.get('reason');
  if (reason !== null) {
    if (!SELECTION_REASONS.includes(reason as SelectionReason)) return { error: `reason: expected one of ${SELECTION_REASONS.join(', ')}` };
    filter.reason = reason;
  }
  for (const [name, key] of [
    ['since', 'sinceMs'],
    ['until', 'untilMs'],
  ] as const) {
    const value = p.get(name);
    if (value === null) continue;
    const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
    if (!Number.isFinite(ms)) return { error: `${name}: expected an ISO-8601 time or epoch milliseconds` };
    filter[key] = ms;
  }
  const request = p.get('request');
  if (request !== null) {
    if (!/^[A-Za-z0-9_-]{1,100}$/.test(request)) return { error: 'request: expected a request id (letters, digits, _ and -) or a prefix of one' };
    filter.request = request;
  }
  const before = p.get('before') ?? undefined;
  if (before !== undefined && !CURSOR.test(before)) return { error: 'before: expected a cursor from a previous page' };
  const limit = Math.min(500, Math.max(1, Number(p.get('limit')) || 50));
  return { filter, limit, before };
}

/** A log file with what paging needs: its inode, size and, for a rotated file, when it was rotated (epoch ms). */
interface LogFile {
  file: string;
  ino: string;
  size: number;
  rotatedAtMs: number;
}

/** The decision-log files in `dir`, newest first. */
async function logFiles(dir: string): Promise<LogFile[]> {
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const logs = names.filter((n) => n === 'decisions.jsonl' || ROTATED.test(n)).sort(byRotationOrder);
  const out: LogFile[] = [];
  for (const name of logs.reverse()) {
    const file = path.join(dir, name);
    const st = await fs.stat(file, { bigint: true }).catch(() => undefined); // pruned meanwhile
    if (!st) continue;
    const m = /^decisions-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})/.exec(name);
    const rotatedAtMs = m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6] + 1) : Infinity;
    out.push({ file, ino: st.ino.toString(), size: Number(st.size), rotatedAtMs });
  }
  return out;
}

/**
 * The newest `limit` records matching `filter` before the cursor `before`, from the log in `dir`.
 * A page that reads MAX_SCAN_BYTES without filling up returns what it found and a cursor to go on.
 * @throws Error from the file system (other than a missing directory or a file pruned meanwhile)
 */
export async function readDecisionPage(dir: string, q: DecisionQuery): Promise<DecisionPage> {
  const files = await logFiles(dir);
  let start = 0;
  let end: number | undefined;
  if (q.before !== undefined) {
    const [, ino, offset] = CURSOR.exec(q.before)!;
    start = files.findIndex((f) => f.ino === ino);
    if (start < 0) return { records: [], next: null }; // the file was pruned: nothing older is left
    end = Math.min(Number(offset), files[start].size);
  }
  const found: DecisionRecord[] = [];
  const must = needles(q.filter);
  let scanned = 0;
  for (let i = start; i < files.length; i++) {
    const f = files[i];
    // A rotated file holds only requests that arrived before its rotation.
    if (q.filter.sinceMs !== undefined && f.rotatedAtMs < q.filter.sinceMs) break;
    const handle = await fs.open(f.file, 'r').catch(() => undefined);
    if (!handle) continue;
    try {
      let pos = i === start && end !== undefined ? end : f.size;
      let tail = Buffer.alloc(0);
      // A line longer than the cap is dropped as it is read (its end first), never held whole.
      let overlong = false;
      const take = (line: Buffer, offset: number): string | null => {
        if (line.length === 0) return null;
        if (!must.every((n) => line.includes(n))) return null;
        let record: DecisionRecord | null;
        try {
          record = readDecisionRecord(JSON.parse(line.toString('utf8')));
        } catch {
          return null; // a torn or foreign line
        }
        if (!record || !matchesFilter(record, q.filter)) return null;
        found.push(record);
        return found.length >= q.limit ? `${f.ino}:${offset}` : null;
      };
      while (pos > 0) {
        const from = Math.max(0, pos - CHUNK_BYTES);
        const chunk = Buffer.alloc(pos - from);
        await handle.read(chunk, 0, chunk.length, from);
        scanned += chunk.length;
        const buf = tail.length ? Buffer.concat([chunk, tail]) : chunk;
        let lineEnd = buf.length;
        for (let j = buf.lastIndexOf(0x0a, lineEnd - 1); j >= 0; j = lineEnd > 0 ? buf.lastIndexOf(0x0a, lineEnd - 1) : -1) {
          const cursor = overlong ? null : take(buf.subarray(j + 1, lineEnd), from + j + 1);
          overlong = false;
          lineEnd = j;
          if (cursor) return { records: found.reverse(), next: cursor };
        }
        overlong ||= lineEnd > MAX_LOG_LINE_BYTES;
        tail = overlong ? Buffer.alloc(0) : Buffer.from(buf.subarray(0, lineEnd));
        pos = from;
        if (scanned >= MAX_SCAN_BYTES && pos > 0) return { records: found.reverse(), next: `${f.ino}:${pos + tail.length}` };
      }
      const cursor = overlong ? null : take(tail, 0);
      if (cursor) return { records: found.reverse(), next: i + 1 < files.length ? cursor : null };
    } finally {
      await handle.close();
    }
  }
  return { records: found.reverse(), next: null };
}
