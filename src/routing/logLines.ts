/**
 * Splitting a JSON Lines log into lines as its bytes arrive, with a cap on a line's length: a log
 * reader's memory stays bounded by the cap (plus one chunk) whatever the file holds — a damaged log
 * with a line of hundreds of MB is skipped line by line, not read whole. Pure: the caller supplies
 * the chunks (a file stream, a test's buffers).
 */

/** The longest line a log reader takes, in bytes (a decision record is a few KB). */
export const MAX_LOG_LINE_BYTES = 1024 * 1024;

/** One line of a log: its number (1-based) and text, or null text for a line longer than the cap. */
export interface LogLine {
  /** 1-based line number. */
  n: number;
  /** The line without its line end (`\n` or `\r\n`); null when the line is longer than the cap (skipped, never held whole). */
  text: string | null;
  /** The line's length in bytes, without its line end. */
  bytes: number;
}

/**
 * The lines of `chunks`, in order; a last line without a line end counts too.
 * @param chunks the log's bytes in order (e.g. a `fs.createReadStream` without an encoding)
 * @param maxLineBytes the cap; a longer line comes with `text: null`
 * @throws whatever iterating `chunks` throws
 */
export async function* logLines(chunks: AsyncIterable<Uint8Array>, maxLineBytes = MAX_LOG_LINE_BYTES): AsyncGenerator<LogLine> {
  let parts: Buffer[] = [];
  let bytes = 0;
  let tooLong = false;
  let n = 0;
  const end = (last: Buffer): LogLine => {
    n++;
    const total = bytes + last.length;
    let line: LogLine;
    if (tooLong || total > maxLineBytes) line = { n, text: null, bytes: total };
    else {
      const text = (parts.length ? Buffer.concat([...parts, last]) : last).toString('utf8');
      line = { n, text: text.endsWith('\r') ? text.slice(0, -1) : text, bytes: total };
    }
    parts = [];
    bytes = 0;
    tooLong = false;
    return line;
  };
  for await (const c of chunks) {
    const chunk = Buffer.isBuffer(c) ? c : Buffer.from(c.buffer, c.byteOffset, c.byteLength);
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, start)) {
      yield end(chunk.subarray(start, nl));
      start = nl + 1;
    }
    const rest = chunk.subarray(start);
    if (rest.length === 0) continue;
    bytes += rest.length;
    if (!tooLong && bytes > maxLineBytes) {
      tooLong = true;
      parts = []; // only its length is kept from here on
    }
    if (!tooLong) parts.push(Buffer.from(rest)); // a copy: the chunk's memory is not held past this line
  }
  if (bytes > 0 || tooLong) yield end(Buffer.alloc(0));
}
