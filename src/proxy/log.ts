/**
 * The logger interface every layer above `routing/` uses. The CLI writes to
 * stderr; the extension to a LogOutputChannel. Messages never carry tokens:
 * callers pass labels and request ids, never credentials.
 */
import type { TokenManagerEvents } from '../accounts/tokenManager';

export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  /** Whether debug lines are kept; callers skip building them when not (assumed kept when absent). */
  debugEnabled?(): boolean;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'off';
const ORDER: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, off: 4 };

/** A logger writing `LEVEL component: message` lines to a stream at or above `level`. */
export function streamLogger(write: (line: string) => void, level: LogLevel = 'info'): Logger {
  const at = (l: Exclude<LogLevel, 'off'>) => (message: string) => {
    if (ORDER[l] >= ORDER[level]) write(`${new Date().toISOString()} ${l.toUpperCase()} ${message}\n`);
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), debugEnabled: () => ORDER[level] <= ORDER.debug };
}

/**
 * Logs a promise rejection nobody handled (a bug) as an error instead of letting Node end the
 * process on it — the last resort of the CLI and the extension host. Only the error's name, the
 * first line of its message and its first stack frame are logged.
 * @returns a function that removes the handler
 */
export function logUnhandledRejections(log: Pick<Logger, 'error'>): () => void {
  const handler = (reason: unknown) => {
    const what =
      reason instanceof Error
        ? `${reason.name}: ${reason.message.split('\n')[0].slice(0, 300)}${reason.stack?.split('\n').find((l) => l.trim().startsWith('at ')) ?? ''}`
        : typeof reason;
    log.error(`an unhandled rejection, logged so the router keeps running (a bug; please report it): ${what}`);
  };
  process.on('unhandledRejection', handler);
  return () => void process.off('unhandledRejection', handler);
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {}, debugEnabled: () => false };

/**
 * Log lines for a TokenManager's saves (its `events`): a rotated token pair that could not be
 * stored is in use from memory and retried, so it is a warning, not a failed request; the line
 * says what a restart would cost. Labels and the store's token-free reason only.
 */
export function tokenSaveLog(log: Logger): TokenManagerEvents {
  return {
    saveFailed: ({ label, attempt, reason, retryInMs }) =>
      log.warn(
        `account ${label}: the refreshed token could not be saved (attempt ${attempt}: ${reason}); it is in use from memory, ` +
          `next try in ${Math.round(retryInMs / 1000)} s. Until it is saved, stopping the router means signing this account in again.`,
      ),
    saved: (label, failedAttempts) => log.info(`account ${label}: the refreshed token is saved now (after ${failedAttempts} failed attempt${failedAttempts === 1 ? '' : 's'})`),
  };
}
