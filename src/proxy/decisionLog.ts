/**
 * Where decision records go: `decisions.jsonl` in the state directory, one
 * JSON object per line, rotated by size or by UTC day (the rotated file is
 * renamed `decisions-YYYYMMDDTHHMMSS.jsonl`; the oldest beyond `keep` are
 * deleted). The last few hundred records are also kept in memory for
 * `/status` and the VS Code views.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DecisionRecord } from '../routing/decision';

/** Where decisions are appended. `append` never throws. */
export interface DecisionSink {
  append(record: DecisionRecord): void;
  /** The last `limit` records, oldest first. */
  recent(limit: number): DecisionRecord[];
}

/** Keeps the most recent records in memory. */
export class MemoryDecisionSink implements DecisionSink {
  readonly records: DecisionRecord[] = [];
  constructor(private readonly capacity = 500) {}
  append(record: DecisionRecord): void {
    this.records.push(record);
    if (this.records.length > this.capacity) this.records.splice(0, this.records.length - this.capacity);
  }
  recent(limit: number): DecisionRecord[] {
    return this.records.slice(-limit);
  }
}

export interface DecisionLogOptions {
  /** Directory holding decisions.jsonl. */
  dir: string;
  /** Rotate when the file reaches this size, bytes (default 20 MB). */
  maxBytes?: number;
  /** Rotated files kept (default 14). */
  keep?: number;
  now?: () => number;
  onError?: (err: Error) => void;
}

export class DecisionLog implements DecisionSink {
  readonly file: string;
  private readonly memory = new MemoryDecisionSink();
  private stream: fs.WriteStream | undefined;
  private readonly pending: string[] = [];
  private flushScheduled = false;
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
  }

  append(record: DecisionRecord): void {
    this.memory.append(record);
    // Lines written within one turn of the event loop go out in one write.
    this.pending.push(JSON.stringify(record));
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.pending.length === 0) return;
    const text = this.pending.join('\n') + '\n';
    this.pending.length = 0;
    try {
      const today = new Date(this.now()).toISOString().slice(0, 10);
      const size = Buffer.byteLength(text);
      if (!this.stream) this.open(today);
      else if (today !== this.day || (this.bytes > 0 && this.bytes + size > this.maxBytes)) this.rotate(today);
      this.stream!.write(text);
      this.bytes += size;
    } catch (err) {
      this.opts.onError?.(err as Error);
    }
  }

  recent(limit: number): DecisionRecord[] {
    return this.memory.recent(limit);
  }

  /** Flushes and closes the file. */
  close(): Promise<void> {
    this.flush();
    const s = this.stream;
    this.stream = undefined;
    return new Promise((resolve) => (s ? s.end(resolve) : resolve()));
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
    old?.end();
    this.renameCurrent();
    this.open(today);
  }

  private renameCurrent(): void {
    const stamp = new Date(this.now()).toISOString().replace(/[-:]/g, '').slice(0, 15);
    let target = path.join(this.opts.dir, `decisions-${stamp}.jsonl`);
    for (let i = 1; fs.existsSync(target); i++) target = path.join(this.opts.dir, `decisions-${stamp}-${i}.jsonl`);
    fs.renameSync(this.file, target);
    const rotated = fs
      .readdirSync(this.opts.dir)
      .filter((f) => /^decisions-.*\.jsonl$/.test(f))
      .sort();
    for (const f of rotated.slice(0, Math.max(0, rotated.length - this.keep))) fs.rmSync(path.join(this.opts.dir, f), { force: true });
  }
}
