/**
 * Credentials in one JSON file, mode 0600, written atomically (temp file +
 * rename). Every read goes to disk so a token rotated by another process
 * (another VS Code window, a second CLI) is seen before we try to refresh it
 * ourselves. Every write is a read-modify-write of the whole file, so writes
 * are serialised in-process by a queue and across processes by a lock
 * (`<file>.lock`, proper-lockfile): without it, `claude-router accounts add`
 * running beside the proxy could put back an account's spent pair.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import * as lockfile from 'proper-lockfile';
import type { CredentialStore, Credentials } from './types';

type FileShape = { version: 1; accounts: Record<string, Credentials> };

/**
 * A lock its holder has not touched for this long (ms) belongs to a dead process and is taken
 * over. A holder touches it every LOCK_STALE_MS / 2 while it writes (a write takes milliseconds).
 * proper-lockfile takes a stale lock over by removing and re-creating it, so two waiters doing
 * that at the same moment can both hold it: that needs a killed holder and two writers at once.
 */
const LOCK_STALE_MS = 10_000;
/**
 * How long a write waits for a lock another process holds (ms): longer than LOCK_STALE_MS, so a
 * lock left by a killed process is taken over before we give up.
 */
const LOCK_WAIT_MS = 15_000;

export class FileCredentialStore implements CredentialStore {
  private writes: Promise<unknown> = Promise.resolve();

  /** @param file absolute path of the JSON file (created on first write). */
  constructor(readonly file: string) {}

  async get(label: string): Promise<Credentials | undefined> {
    const accounts = (await this.read()).accounts;
    return Object.prototype.hasOwnProperty.call(accounts, label) ? accounts[label] : undefined;
  }

  async labels(): Promise<string[]> {
    return Object.keys((await this.read()).accounts);
  }

  set(label: string, credentials: Credentials): Promise<void> {
    return this.update((data) => {
      data.accounts[label] = credentials;
    });
  }

  delete(label: string): Promise<void> {
    return this.update((data) => {
      delete data.accounts[label];
    });
  }

  /**
   * One read-modify-write under the in-process queue and the cross-process lock.
   * @throws Error with code `ELOCKED` when another process held the lock too long; any fs
   * error (EACCES, ENOSPC, EPERM on rename). Nothing is written then and no temp file is left.
   */
  private update(mutate: (data: FileShape) => void): Promise<void> {
    const next = this.writes.then(async () => {
      await fs.mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
      let lost: Error | undefined;
      const release = await this.lock((err) => (lost = err));
      const tmp = `${this.file}.${randomBytes(6).toString('hex')}.tmp`;
      try {
        const data = await this.read();
        mutate(data);
        await fs.writeFile(tmp, JSON.stringify(data, null, 2), { mode: 0o600 });
        // We stalled past LOCK_STALE_MS and another process took the lock: it may have written
        // since our read, and renaming now would undo that.
        if (lost) throw new Error(`credential store ${this.file}: lost its lock while writing (${lost.message}); nothing was written`);
        await fs.rename(tmp, this.file);
      } catch (err) {
        // A failed write must not leave a copy of every token in a stray file.
        await fs.rm(tmp, { force: true }).catch(() => undefined);
        throw err;
      } finally {
        await release().catch(() => undefined); // already released when the lock was lost
      }
    });
    this.writes = next.catch(() => undefined);
    return next;
  }

  private async lock(onLost: (err: Error) => void): Promise<() => Promise<void>> {
    const deadline = Date.now() + LOCK_WAIT_MS;
    // Only a lock held by another process is worth waiting for (proper-lockfile's own retries
    // would also wait out EACCES or ENOSPC, stalling the refresh that waits for this write).
    for (let pause = 20; ; pause = Math.min(pause * 1.5, 1_000)) {
      try {
        // realpath: false — the file itself need not exist yet; the lock is `${file}.lock`.
        return await lockfile.lock(this.file, { realpath: false, stale: LOCK_STALE_MS, onCompromised: onLost });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
      }
      if (Date.now() >= deadline) {
        throw Object.assign(
          new Error(`credential store ${this.file}: another process has held its lock (${this.file}.lock) for over ${LOCK_WAIT_MS / 1000} s; nothing was written, try again`),
          { code: 'ELOCKED' },
        );
      }
      // Jittered, so two waiting processes do not retry in step.
      await new Promise((resolve) => setTimeout(resolve, pause * (1 + Math.random())));
    }
  }

  private async read(): Promise<FileShape> {
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, accounts: Object.create(null) as Record<string, Credentials> };
      throw err;
    }
    let parsed: Partial<FileShape>;
    try {
      parsed = JSON.parse(text) as Partial<FileShape>;
    } catch {
      // JSON.parse's message quotes the text around the error, which may be a token.
      throw new Error(`credential store ${this.file} is not valid JSON; fix it or move it away`);
    }
    if (!parsed || typeof parsed !== 'object' || typeof parsed.accounts !== 'object' || parsed.accounts === null) {
      throw new Error(`credential store ${this.file} is not in the expected format`);
    }
    // A prototype-less map: a label can never reach Object.prototype.
    return { version: 1, accounts: Object.assign(Object.create(null) as Record<string, Credentials>, parsed.accounts) };
  }
}
