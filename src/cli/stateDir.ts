/**
 * The CLI's state directory and the files in it:
 * `credentials.json` (0600), `accounts.json` (accounts added by command),
 * `client-key` (0600), `router-state.json`, `decisions.jsonl`, `proxy.json` (discovery.ts).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { newClientKey } from '../proxy/http/guard';
import { checkPrivateDir, checkPrivateFile, createPrivateFile } from './privateFiles';

/** `$XDG_CONFIG_HOME/claude-router`, else `~/.config/claude-router`. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.trim() ? env.XDG_CONFIG_HOME : path.join(os.homedir(), '.config');
  return path.join(base, 'claude-router');
}

/** Expands a leading `~/`. */
export function expandHome(p: string): string {
  return p === '~' ? os.homedir() : p.startsWith('~/') ? path.join(os.homedir(), p.slice(2)) : p;
}

/** `<dir>/client-key`. */
export function clientKeyFile(dir: string): string {
  return path.join(dir, 'client-key');
}

/**
 * The local client key stored in `<dir>/client-key`, or undefined when there is none.
 * @throws UnsafePathError when the file belongs to another user or others may read or write it (privateFiles.ts)
 */
export function readClientKey(dir: string): string | undefined {
  const file = clientKeyFile(dir);
  checkPrivateFile(file, 'client-key');
  try {
    const key = fs.readFileSync(file, 'utf8').trim();
    return key.length >= 16 ? key : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads the local client key from `<dir>/client-key`, creating it (0600, 32 random bytes, never
 * through a symbolic link) on first use.
 * @throws UnsafePathError when the directory or the file could be changed by another user
 */
export function loadOrCreateClientKey(dir: string): string {
  checkPrivateDir(dir, 'state-dir');
  const existing = readClientKey(dir);
  if (existing) return existing;
  const file = clientKeyFile(dir);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const key = newClientKey();
  // A file without a usable key (or a dangling link) is replaced: the link itself goes, never its target.
  fs.rmSync(file, { force: true });
  createPrivateFile(file, key + '\n');
  return key;
}

/**
 * Replaces `<dir>/client-key` with a new key (0600), atomically: readers see the old file or
 * the new one, never a partial key. A proxy running from `dir` takes it up (watchClientKey).
 * @returns the new key
 * @throws UnsafePathError when the directory could be changed by another user
 * @throws Error (with the file system's code) when the directory cannot be written
 */
export function rotateClientKeyFile(dir: string): string {
  checkPrivateDir(dir, 'state-dir');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = clientKeyFile(dir);
  const temp = `${file}.${process.pid}.tmp`;
  const key = newClientKey();
  try {
    fs.rmSync(temp, { force: true }); // a leftover of a crashed run of this pid
    fs.writeFileSync(temp, key + '\n', { mode: 0o600, flag: 'wx' });
    fs.renameSync(temp, file);
  } catch (err) {
    fs.rmSync(temp, { force: true });
    throw err;
  }
  return key;
}

/**
 * Calls `onKey` with the key in `<dir>/client-key` whenever it changes to another usable key. The
 * directory is watched (inotify on Linux: a rename into place is seen at once) and the file's
 * metadata is also polled every `intervalMs` (it survives replacement by rename and file systems
 * without change events), so a missed event costs at most one interval. A missing, too short or
 * unsafe key is ignored (the key in force stays).
 * @returns a function that stops watching
 */
export function watchClientKey(dir: string, onKey: (key: string) => void, intervalMs = 500): () => void {
  const file = clientKeyFile(dir);
  let last: string | undefined;
  try {
    last = readClientKey(dir);
  } catch {
    last = undefined;
  }
  const check = () => {
    let key: string | undefined;
    try {
      key = readClientKey(dir);
    } catch {
      return; // a file others could have written: the key in force stays
    }
    if (!key || key === last) return;
    last = key;
    onKey(key);
  };
  const listener = (curr: fs.Stats, prev: fs.Stats) => {
    if (curr.mtimeMs !== prev.mtimeMs || curr.ino !== prev.ino || curr.size !== prev.size) check();
  };
  fs.watchFile(file, { interval: intervalMs, persistent: false }, listener);
  let events: fs.FSWatcher | undefined;
  try {
    events = fs.watch(dir, { persistent: false }, (_event, name) => {
      if (name === null || String(name) === path.basename(file)) check();
    });
    events.on('error', () => events?.close()); // the poll still runs
  } catch {
    events = undefined; // no change events here (or the watch limit is reached): the poll serves
  }
  return () => {
    fs.unwatchFile(file, listener);
    events?.close();
  };
}
