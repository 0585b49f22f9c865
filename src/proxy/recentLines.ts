/**
 * The most recent lines of a log, kept as bytes in one fixed ring buffer outside the
 * JavaScript heap. Lines kept as strings (or parsed objects) would each live long enough to
 * be promoted and carried through every old-generation collection; a request-rate stream of
 * them costs the garbage collector more than writing them. Lines are decoded only when read.
 */
export class RecentLines {
  private readonly ring: Buffer;
  /** Start, length (bytes) and lap (times the ring wrapped before it) of line `seq`, at slot `seq % capacity`. */
  private readonly starts: Int32Array;
  private readonly lengths: Int32Array;
  private readonly laps: Float64Array;
  /** Sequence numbers of the oldest kept line and of the next line. */
  private oldest = 0;
  private next = 0;
  private head = 0;
  private lap = 0;

  /**
   * @param capacity most lines kept
   * @param ringBytes bytes kept; older lines are dropped as newer ones overwrite them
   */
  constructor(
    private readonly capacity: number,
    ringBytes: number,
  ) {
    this.ring = Buffer.allocUnsafeSlow(ringBytes);
    this.starts = new Int32Array(capacity);
    this.lengths = new Int32Array(capacity);
    this.laps = new Float64Array(capacity);
  }

  /**
   * Keeps `src[start, end)` as the newest line (copied). A line larger than the whole ring
   * cannot be kept: it empties the ring instead, so what is kept is always the latest lines.
   */
  push(src: Buffer, start: number, end: number): void {
    const n = end - start;
    if (n > this.ring.length) {
      this.oldest = this.next;
      return;
    }
    if (this.head + n > this.ring.length) {
      // The lines of the previous lap (all past `head`) are the oldest; wrapping leaves them behind.
      while (this.oldest < this.next && this.laps[this.oldest % this.capacity] < this.lap) this.oldest++;
      this.lap++;
      this.head = 0;
    }
    const from = this.head;
    const to = from + n;
    // Drop the previous lap's lines this one overwrites (they come oldest first, in ring
    // order), and the oldest beyond capacity.
    while (this.oldest < this.next) {
      const slot = this.oldest % this.capacity;
      const overwritten = this.laps[slot] < this.lap && this.starts[slot] < to;
      if (!overwritten && this.next - this.oldest < this.capacity) break;
      this.oldest++;
    }
    src.copy(this.ring, from, start, end);
    const slot = this.next % this.capacity;
    this.starts[slot] = from;
    this.lengths[slot] = n;
    this.laps[slot] = this.lap;
    this.next++;
    this.head = to;
  }

  /** Sequence numbers `[from, to)` of the last `limit` lines kept (fewer when fewer are kept), oldest first. */
  lastSeqs(limit: number): { from: number; to: number } {
    return { from: Math.max(this.oldest, this.next - limit), to: this.next };
  }

  /** The text of kept line `seq` (from {@link lastSeqs}). */
  text(seq: number): string {
    const slot = seq % this.capacity;
    return this.ring.toString('utf8', this.starts[slot], this.starts[slot] + this.lengths[slot]);
  }
}
