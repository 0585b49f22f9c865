/**
 * Credentials in one JSON file, mode 0600, written atomically (temp file +
 * rename) with writes serialised in-process. Every read goes to disk so a
 * token rotated by another process (another VS Code window, a second CLI) is
 * seen before we try to refresh it ourselves.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { CredentialStore, Credentials } from './types';

type FileShape = { version: 1; accounts: Record<string, Credentials> };

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

  private update(mutate: (data: FileShape) => void): Promise<void> {
    const next = this.writes.then(async () => {
      const data = await this.read();
      mutate(data);
      await fs.mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
      const tmp = `${this.file}.${randomBytes(6).toString('hex')}.tmp`;
      await fs.writeFile(tmp, JSON.stringify(data, null, 2), { mode: 0o600 });
      await fs.rename(tmp, this.file);
    });
    this.writes = next.catch(() => undefined);
    return next;
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

/** A store held in memory (tests, the demo). */
export class MemoryCredentialStore implements CredentialStore {
  private readonly map = new Map<string, Credentials>();
  async get(label: string) {
    const c = this.map.get(label);
    return c ? { ...c } : undefined;
  }
  async set(label: string, credentials: Credentials) {
    this.map.set(label, { ...credentials });
  }
  async delete(label: string) {
    this.map.delete(label);
  }
  async labels() {
    return [...this.map.keys()];
  }
}
