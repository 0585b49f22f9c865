/**
 * Reading a decision log file line by line for `report`, `replay` and `simulate`: streamed, never
 * read whole, each line capped at MAX_LOG_LINE_BYTES (src/routing/logLines.ts), so a damaged log
 * with a huge line costs bounded memory and is reported, not fatal.
 */
import { createReadStream } from 'node:fs';
import { logLines, MAX_LOG_LINE_BYTES, type LogLine } from '../routing/logLines';

const READ_ERRORS: Record<string, string> = { ENOENT: 'no such file', EACCES: 'permission denied', EISDIR: 'it is a directory' };

/** A log file that cannot be read; the message names the file and why, in words. */
export class LogReadError extends Error {}

/** Bytes read from the file at a time. */
const CHUNK_BYTES = 256 * 1024;

/**
 * The lines of `file` (see LogLine: a line over the cap has null text).
 * @throws LogReadError when the file cannot be opened or read (missing, a directory, no permission)
 */
export async function* readLogLines(file: string): AsyncGenerator<LogLine> {
  const stream = createReadStream(file, { highWaterMark: CHUNK_BYTES });
  try {
    yield* logLines(stream);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new LogReadError(`cannot read ${file}: ${(code && READ_ERRORS[code]) ?? code ?? (err as Error).message}`);
  } finally {
    stream.destroy();
  }
}

/** Why a line over the cap was skipped, for a warning: "longer than 1 MB (612.3 MB)". */
export function tooLongText(line: LogLine): string {
  const mb = (n: number) => `${Number((n / 1024 / 1024).toFixed(1))} MB`;
  return `longer than ${mb(MAX_LOG_LINE_BYTES)} (${mb(line.bytes)})`;
}
