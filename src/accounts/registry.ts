/**
 * Accounts added by command (`claude-router accounts add|import`) rather than
 * by the config file: their metadata (never secrets) in `accounts.json`.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { AccountInfo } from './types';

export class AccountRegistry {
  constructor(readonly file: string) {}

  async list(): Promise<AccountInfo[]> {
    try {
      const data = JSON.parse(await fs.readFile(this.file, 'utf8')) as { accounts?: AccountInfo[] };
      return Array.isArray(data.accounts) ? data.accounts : [];
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new Error(`${this.file} is not readable: ${(err as Error).message}`, { cause: err });
    }
  }

  async upsert(info: AccountInfo): Promise<void> {
    const all = (await this.list()).filter((a) => a.label !== info.label);
    all.push(info);
    await this.write(all);
  }

  async remove(label: string): Promise<boolean> {
    const all = await this.list();
    const next = all.filter((a) => a.label !== label);
    if (next.length === all.length) return false;
    await this.write(next);
    return true;
  }

  private async write(accounts: AccountInfo[]): Promise<void> {
    await fs.mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.tmp`;
    await fs.writeFile(tmp, JSON.stringify({ version: 1, accounts }, null, 2), { mode: 0o600 });
    await fs.rename(tmp, this.file);
  }
}
