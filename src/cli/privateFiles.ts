/**
 * Owner and mode checks for the CLI's private files: the state directory and the key files in it
 * (`client-key`, `store.key`). Another local user who could write the directory, or who owns a
 * key file, could choose the key the router uses; a key file others can read is a key others
 * hold. Such a path is refused with an error that names it and the command that fixes it.
 * On platforms without Unix owners and modes (Windows) nothing is checked.
 */
import * as fs from 'node:fs';

/** A private path that another user owns or could change or read; the message names the path and the fix. */
export class UnsafePathError extends Error {}

/** The current user's id, or undefined where there are no Unix owners. */
function currentUid(): number | undefined {
  return process.platform === 'win32' ? undefined : process.getuid?.();
}

/** The path's metadata (following links), or undefined when it does not exist. */
function statOf(target: string): fs.Stats | undefined {
  try {
    return fs.statSync(target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function octal(mode: number): string {
  return (mode & 0o777).toString(8).padStart(4, '0');
}

/**
 * Refuses a directory (when it exists) that another user owns or that its group or others may write.
 * @param what how the user names it (`state-dir`)
 * @throws UnsafePathError naming `dir` and the fix
 */
export function checkPrivateDir(dir: string, what: string): void {
  const uid = currentUid();
  const st = uid === undefined ? undefined : statOf(dir);
  if (st === undefined) return;
  if (st.uid !== uid) throw new UnsafePathError(`${what} ${dir} belongs to another user (uid ${st.uid}): use a directory of your own (--state-dir)`);
  if ((st.mode & 0o022) !== 0) {
    throw new UnsafePathError(`${what} ${dir} can be written by other users (mode ${octal(st.mode)}), who could choose its keys: chmod 700 ${JSON.stringify(dir)}`);
  }
}

/**
 * Refuses a key file (when it exists) that another user owns or that its group or others may read or write.
 * @param what how the user names it (`client-key`, `state-store-key-file`)
 * @throws UnsafePathError naming `file` and the fix
 */
export function checkPrivateFile(file: string, what: string): void {
  const uid = currentUid();
  const st = uid === undefined ? undefined : statOf(file);
  if (st === undefined) return;
  if (st.uid !== uid) throw new UnsafePathError(`${what} ${file} belongs to another user (uid ${st.uid}), who chose its key: remove it, and a new one is made`);
  if ((st.mode & 0o077) !== 0) {
    throw new UnsafePathError(`${what} ${file} can be read or changed by other users (mode ${octal(st.mode)}): chmod 600 ${JSON.stringify(file)} (and treat the key as leaked)`);
  }
}

/**
 * Creates `file` with `text`, mode 0600, only when nothing is at that path — not even a symbolic
 * link (O_EXCL; O_NOFOLLOW besides), so nothing is ever written through a link another user planted.
 * @throws Error with code EEXIST when the path exists
 */
export function createPrivateFile(file: string, text: string): void {
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
  const fd = fs.openSync(file, O_WRONLY | O_CREAT | O_EXCL | (O_NOFOLLOW ?? 0), 0o600);
  try {
    fs.writeSync(fd, text);
  } finally {
    fs.closeSync(fd);
  }
}
