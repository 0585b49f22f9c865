/**
 * Ending the CLI process without losing output. `process.exit()` ends the process at once, and a
 * write to a pipe that the reader has not taken yet is still queued in the process: it would be
 * lost (a slow `| less` or `| jq` got the first 64 KB and exit 0). So the process exits only once
 * standard output and standard error have handed every byte to the operating system. A reader
 * that is gone (`EPIPE`, e.g. `| head -1`) is no error of ours: nothing more is written, quietly.
 */

/** The streams whose queued bytes an exit waits for. */
const OUTPUTS = [process.stdout, process.stderr];

/**
 * Resolves once `stream` has written everything queued before this call (or cannot write any more:
 * destroyed, or its reader gone). Never rejects.
 */
export function flushed(stream: NodeJS.WriteStream): Promise<void> {
  if (stream.destroyed || stream.writableLength === 0) return Promise.resolve();
  // Writes complete in order: the callback of an empty write runs after every write queued before it.
  return new Promise((resolve) => {
    stream.once('error', () => resolve());
    stream.write('', () => resolve());
  });
}

/**
 * Exits with `code` once standard output and standard error are flushed (see `flushed`).
 * @param code the exit status (0 ok, 1 failure, 2 bad usage)
 */
export function exitWhenFlushed(code: number): void {
  process.exitCode = code;
  void Promise.all(OUTPUTS.map(flushed)).then(() => process.exit(code));
}

/**
 * A reader that went away (`EPIPE`) ends the process quietly with `code()`, once the other stream is
 * flushed; any other output error is thrown (an uncaught error, exit 1).
 * @param code the exit status to end with: the command's own when it is known, else 0
 */
export function quietOnClosedReader(code: () => number): void {
  for (const stream of OUTPUTS) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      stream.destroy();
      exitWhenFlushed(code());
    });
  }
}
