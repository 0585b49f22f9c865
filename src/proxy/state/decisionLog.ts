/**
 * Where decision records go: `decisions.jsonl` in the state directory, one
 * JSON object per line, rotated by size or by UTC day (the rotated file is
 * renamed `decisions-YYYYMMDDTHHMMSS.jsonl`; the oldest beyond `keep` are
 * deleted). The last 500 records are also kept in memory for `/decisions`
 * and the VS Code views.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DecisionRecord } from '../../routing/decision';
import { DecisionLineEncoder } from '../../routing/decisionLine';
import { RecentLines } from './recentLines';
import { byRotationOrder, ROTATED } from './decisionFiles';
import { readDecisionPage, type DecisionPage, type DecisionQuery } from './decisionQuery';

/** Where decisions are appended. `append` never throws. */
export interface DecisionSink {
  append(record: DecisionRecord): void;
  /** The last `limit` records, oldest first. */
  recent(limit: number): DecisionRecord[];
  /** A filtered page of every record, on disk included, newest page first (decisionQuery.ts). */
  query(q: DecisionQuery): Promise<DecisionPage>;
}

export interface DecisionLogOptions {
  /** Directory holding decisions.jsonl. */
  dir: string;
  /** Rotate when the file reaches this size, bytes (default 20 MB). */
  maxBytes?: number;
  /** Rotated files kept (default 14). */
  keep?: number;
  /**
   * Lines are written at most this often, ms (default 100): one file write per batch rather
   * than per request — each write wakes a libuv thread (docs/performance.md). At most
   * this much of the log is lost if the process is killed; `close()` writes the rest.
   * 0 writes once per event-loop turn.
   */
  flushIntervalMs?: number;
  now?: () => number;
  onError?: (err: Error) => void;
}

/**
 * Lines are encoded straight into a batch buffer of this size, written when full (or at the
 * interval). Two buffers take turns, so a batch costs no allocation and no copy beyond the
 * encoding, and a write serves a hundred requests or so (each file write wakes a libuv
 * thread, which costs more than the bytes).
 */
const BATCH_BYTES = 256 * 1024;

export class DecisionLog implements DecisionSink {
  readonly file: string;
  /** The last 500 lines (at most 4 MiB), for `recent()`. */
  private readonly memory = new RecentLines(500, 4 * 1024 * 1024);
  /** The records the last `recent()` call returned, by sequence number: a view asking again parses only what is new. */
  private parsed = new Map<number, DecisionRecord>();
  private readonly encoder = new DecisionLineEncoder();
  private stream: fs.WriteStream | undefined;
  /** Streams of rotated files still writing their last batches. */
  private retiring: Promise<void> = Promise.resolve();
  /** The batch being filled, and how many bytes of it are used. */
  private batch: Buffer = Buffer.allocUnsafeSlow(BATCH_BYTES);
  private used = 0;
  /** The other batch buffer, when no write holds it. */
  private spare: Buffer | undefined = Buffer.allocUnsafeSlow(BATCH_BYTES);
  private flushTimer: NodeJS.Timeout | undefined;
  private flushImmediate: NodeJS.Immediate | undefined;
  private readonly flushIntervalMs: number;
  private bytes = 0;
  private day = '';
  private readonly maxBytes: number;
  private readonly keep: number;
  private readonly now: () => number;

  constructor(private readonly opts: DecisionLogOptions) {
    this.file = path.join(opts.dir, 'decisions.jsonl');
    this.maxBytes = opts.maxBytes ?? 20 * 1024 * 1024;
    this.keep = opts.keep ?? 14;
    this.now = opts.now ?? Date.now;
    this.flushIntervalMs = opts.flushIntervalMs ?? 100;
  }

  append(record: DecisionRecord): void {
    let line: string;
    try {
      line = this.encoder.encode(record);
    } catch {
      line = JSON.stringify(record); // a record that is not what its type says: the generic way, never a throw
    }
    // At most 3 UTF-8 bytes per UTF-16 unit: room is checked without measuring the line.
    const room = line.length * 3 + 1;
    if (this.used + room > BATCH_BYTES) this.flush();
    if (room > BATCH_BYTES) {
      const bytes = Buffer.from(`${line}\n`);
      this.memory.push(bytes, 0, bytes.length - 1);
      this.write(bytes, undefined);
    } else {
      const start = this.used;
      this.used += this.batch.write(line, start);
      this.memory.push(this.batch, start, this.used);
      this.batch[this.used++] = 0x0a;
    }
    if (this.flushIntervalMs === 0) this.flushImmediate ??= setImmediate(() => this.flush());
    else this.flushTimer ??= setTimeout(() => this.flush(), this.flushIntervalMs).unref();
  }

  private flush(): void {
    clearTimeout(this.flushTimer);
    clearImmediate(this.flushImmediate);
    this.flushTimer = undefined;
    this.flushImmediate = undefined;
    if (this.used === 0) return;
    const full = this.batch;
    const bytes = full.subarray(0, this.used);
    this.batch = this.spare ?? Buffer.allocUnsafeSlow(BATCH_BYTES);
    this.spare = undefined;
    this.used = 0;
    this.write(bytes, full);
  }

  /** Appends bytes to the file (rotating first when due); `recycle` is handed back as the spare batch once written. */
  private write(bytes: Buffer, recycle: Buffer | undefined): void {
    try {
      const today = new Date(this.now()).toISOString().slice(0, 10);
      if (!this.stream) this.open(today);
      else if (today !== this.day || (this.bytes > 0 && this.bytes + bytes.length > this.maxBytes)) this.rotate(today);
      this.stream!.write(bytes, () => {
        if (recycle) this.spare = recycle;
      });
      this.bytes += bytes.length;
    } catch (err) {
      this.opts.onError?.(err as Error);
    }
  }

  recent(limit: number): DecisionRecord[] {
    const parsed = new Map<number, DecisionRecord>();
    const out: DecisionRecord[] = [];
    const { from, to } = this.memory.lastSeqs(limit);
    for (let seq = from; seq < to; seq++) {
      const record = this.parsed.get(seq) ?? (JSON.parse(this.memory.text(seq)) as DecisionRecord);
      parsed.set(seq, record);
      out.push(record);
    }
    this.parsed = parsed;
    return out;
  }

  /** Writes what is batched and waits until every record appended so far is in the file. */
  async sync(): Promise<void> {
    this.flush();
    const s = this.stream;
    if (s) await new Promise<void>((resolve) => s.write(Buffer.alloc(0), () => resolve()));
    await this.retiring;
  }

  async query(q: DecisionQuery): Promise<DecisionPage> {
    await this.sync();
    return readDecisionPage(this.opts.dir, q);
  }

  /** Flushes and closes the file. */
  async close(): Promise<void> {
    this.flush();
    const s = this.stream;
    this.stream = undefined;
    await new Promise<void>((resolve) => (s ? s.end(resolve) : resolve()));
    // A rotated file's last writes may still be on their way: closed means every record is on disk.
    await this.retiring;
  }

  private open(today: string): void {
    fs.mkdirSync(this.opts.dir, { recursive: true, mode: 0o700 });
    let size = 0;
    try {
      const st = fs.statSync(this.file);
      size = st.size;
      // A file left from another day is rotated before we append to it.
      if (size > 0 && new Date(st.mtimeMs).toISOString().slice(0, 10) !== today) {
        this.renameCurrent();
        size = 0;
      }
    } catch {
      /* no file yet */
    }
    // Opened synchronously so the file exists at once: a rotation right after must find it.
    const fd = fs.openSync(this.file, 'a', 0o600);
    this.stream = fs.createWriteStream(this.file, { fd, flags: 'a' });
    this.stream.on('error', (err) => this.opts.onError?.(err));
    this.bytes = size;
    this.day = today;
  }

  private rotate(today: string): void {
    const old = this.stream;
    this.stream = undefined;
    if (old) {
      const ended = new Promise<void>((resolve) => old.end(resolve));
      this.retiring = Promise.all([this.retiring, ended]).then(() => undefined);
    }
    this.renameCurrent();
    this.open(today);
  }

  private renameCurrent(): void {
    const stamp = new Date(this.now()).toISOString().replace(/[-:]/g, '').slice(0, 15);
    const rotated = fs.readdirSync(this.opts.dir).filter((f) => ROTATED.test(f));
    // After every rotated file of this second: not the first free name, which pruning may
    // have freed below newer ones (the newest file would then sort as the oldest).
    let last = -1;
    for (const f of rotated) {
      const m = ROTATED.exec(f)!;
      if (m[1] === stamp) last = Math.max(last, Number(m[2] ?? 0));
    }
    const name = last < 0 ? `decisions-${stamp}.jsonl` : `decisions-${stamp}-${last + 1}.jsonl`;
    fs.renameSync(this.file, path.join(this.opts.dir, name));
    rotated.push(name);
    rotated.sort(byRotationOrder);
    for (const f of rotated.slice(0, Math.max(0, rotated.length - this.keep))) fs.rmSync(path.join(this.opts.dir, f), { force: true });
  }
}
