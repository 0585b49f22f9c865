/**
 * The most recent lines of a log, kept as bytes in one ring buffer outside the JavaScript
 * heap, so the garbage collector never promotes and re-marks them (docs/performance.md).
 * Lines are decoded only when read.
 *
 * The ring starts small and doubles (up to its bound) only when the kept lines would not fit
 * otherwise, so its memory follows what `capacity` lines of the actual size need — a ring
 * that wraps at its full bound touches every page of it, however short the lines.
 */
export class RecentLines {
  private ring: Buffer;
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
   * @param maxBytes most bytes the ring grows to; older lines are dropped as newer ones overwrite them
   * @param initialBytes the ring's size until lines need more (at most `maxBytes`)
   */
  constructor(
    private readonly capacity: number,
    private readonly maxBytes: number,
    initialBytes = 64 * 1024,
  ) {
    this.ring = Buffer.allocUnsafeSlow(Math.min(initialBytes, maxBytes));
    this.starts = new Int32Array(capacity);
    this.lengths = new Int32Array(capacity);
    this.laps = new Float64Array(capacity);
  }

  /** Bytes the ring holds now (what it costs in memory): between its initial size and its bound. */
  get ringBytes(): number {
    return this.ring.length;
  }

  /**
   * Keeps `src[start, end)` as the newest line (copied). A line larger than the ring's bound
   * cannot be kept: it empties the ring instead, so what is kept is always the latest lines.
   */
  push(src: Buffer, start: number, end: number): void {
    const n = end - start;
    if (n > this.maxBytes) {
      this.oldest = this.next;
      return;
    }
    if (this.ring.length < this.maxBytes && !this.fits(n)) this.grow(n);
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

  /** Whether `n` more bytes fit without dropping for room a line that capacity would keep. */
  private fits(n: number): boolean {
    const keepFrom = this.next - this.oldest < this.capacity ? this.oldest : this.oldest + 1;
    if (keepFrom === this.next) return n <= this.ring.length;
    const first = keepFrom % this.capacity;
    // All kept lines in this lap, from the oldest's start to `head`: room after them, or before them once wrapped.
    if (this.laps[first] === this.lap) return this.head + n <= this.ring.length || n <= this.starts[first];
    // Kept lines of the previous lap lie past `head`: room up to the oldest of them.
    return this.head + n <= this.starts[first];
  }

  /**
   * Moves the kept lines, oldest first, to the start of a ring at least twice as large (within
   * the bound) with room for `n` more bytes — at the bound, without the oldest lines that leave
   * no room for them (else the wrap that follows would overwrite every kept line).
   */
  private grow(n: number): void {
    let kept = 0;
    for (let seq = this.oldest; seq < this.next; seq++) kept += this.lengths[seq % this.capacity];
    const ring = Buffer.allocUnsafeSlow(Math.min(this.maxBytes, Math.max(this.ring.length * 2, kept + n)));
    while (kept + n > ring.length) kept -= this.lengths[this.oldest++ % this.capacity];
    let at = 0;
    for (let seq = this.oldest; seq < this.next; seq++) {
      const slot = seq % this.capacity;
      this.ring.copy(ring, at, this.starts[slot], this.starts[slot] + this.lengths[slot]);
      this.starts[slot] = at;
      this.laps[slot] = this.lap;
      at += this.lengths[slot];
    }
    this.ring = ring;
    this.head = at;
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
