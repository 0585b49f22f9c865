/**
 * The discovery file: `<state-dir>/proxy.json` (0600), by which `status`, `decisions`, `explain`
 * and `rotate-key` find a running proxy without flags. It holds the proxy's loopback URL, its
 * process id and the state directory it runs from (where its `client-key` is) — never the key
 * itself (docs/security.md#the-discovery-file). `start` writes it in its own state directory; the
 * demo, which runs from a temporary one, also writes it in the user's state directory while no
 * other proxy is registered there.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** What the discovery file says. */
export interface RunningProxy {
  /** `http://127.0.0.1:<port>` (or another loopback host). */
  url: string;
  pid: number;
  /** The state directory the proxy runs from (its client key is `<stateDir>/client-key`). */
  stateDir: string;
}

/** `<dir>/proxy.json`. */
export function discoveryFile(dir: string): string {
  return path.join(dir, 'proxy.json');
}

/** Only a loopback URL is followed: a file that names another host is ignored. */
const LOOPBACK_URL = /^http:\/\/(127\.0\.0\.1|localhost|\[::1\]):\d{1,5}$/;

/**
 * The proxy registered in `dir`, when the file names a loopback URL and a live process (a file of
 * an older version, without `stateDir`, means `dir`); undefined otherwise.
 */
export function findRunningProxy(dir: string): RunningProxy | undefined {
  try {
    const { url, pid, stateDir } = JSON.parse(fs.readFileSync(discoveryFile(dir), 'utf8')) as Partial<Record<keyof RunningProxy, unknown>>;
    if (typeof url !== 'string' || !LOOPBACK_URL.test(url) || typeof pid !== 'number') return undefined;
    process.kill(pid, 0); // throws when no such process
    return { url, pid, stateDir: typeof stateDir === 'string' ? stateDir : dir };
  } catch {
    return undefined;
  }
}

/**
 * Registers `entry` in `dir` (0600, written whole then renamed, so a reader never sees half).
 * @throws Error from the file system when `dir` cannot be written
 */
export function registerProxy(dir: string, entry: RunningProxy): void {
  const file = discoveryFile(dir);
  const temp = `${file}.${process.pid}.tmp`;
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(temp, JSON.stringify(entry), { mode: 0o600 });
  fs.renameSync(temp, file);
}

/** Removes the registration in `dir` if it is still this process's (another proxy may have replaced it). */
export function unregisterProxy(dir: string): void {
  try {
    const { pid } = JSON.parse(fs.readFileSync(discoveryFile(dir), 'utf8')) as { pid?: unknown };
    if (pid === process.pid) fs.rmSync(discoveryFile(dir), { force: true });
  } catch {
    // Gone already, or not ours to judge.
  }
}
