/**
 * What the state directory says about accounts, in `accounts.json` (never secrets): the accounts
 * added by command (`claude-router accounts add|import|login`), and the settings the `accounts`
 * commands keep — `enabled` of accounts the config file defines, the order set by `move`, the
 * primary set by `primary`. Written whole to a temporary file renamed over the old one, so a
 * reader sees the old file or the new one.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { AccountInfo } from './types';

/** The contents of `accounts.json` (version 1; the fields after `accounts` are optional, so older files read as they are). */
export interface RegistryData {
  /** Accounts added by command, in the order they were added. */
  accounts: AccountInfo[];
  /** Per-label settings of accounts defined elsewhere (the config file): `enabled` only. */
  overrides: Record<string, { enabled?: boolean }>;
  /** Every account's label in the order `accounts move` set; absent until the first move. */
  order?: string[];
  /** Set by `accounts primary`. */
  primaryAccount?: string;
}

const accountInfo = z.looseObject({
  label: z.string().min(1),
  kind: z.enum(['oauth', 'api_key']),
  fallback: z.boolean(),
  enabled: z.boolean(),
  priority: z.number().optional(),
  costTier: z.number().optional(),
});

const fileSchema = z.looseObject({
  accounts: z.array(accountInfo).optional(),
  overrides: z.record(z.string(), z.looseObject({ enabled: z.boolean().optional() })).optional(),
  order: z.array(z.string()).optional(),
  primaryAccount: z.string().min(1).optional(),
});

export class AccountRegistry {
  constructor(readonly file: string) {}

  /**
   * The whole file; an absent file is an empty registry.
   * @throws Error naming the file when it cannot be read, is not JSON, or holds a field of the wrong shape
   */
  async read(): Promise<RegistryData> {
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { accounts: [], overrides: {} };
      throw new Error(`${this.file} is not readable: ${(err as Error).message}`, { cause: err });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(`${this.file} is not valid JSON; fix it or move it away`);
    }
    const parsed = fileSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(`${this.file}: ${issue.path.join('.') || '(top level)'}: ${issue.message}`);
    }
    const d = parsed.data;
    return {
      accounts: d.accounts ?? [],
      overrides: Object.assign(Object.create(null) as RegistryData['overrides'], d.overrides ?? {}),
      ...(d.order !== undefined && { order: d.order }),
      ...(d.primaryAccount !== undefined && { primaryAccount: d.primaryAccount }),
    };
  }

  /** The accounts added by command. */
  async list(): Promise<AccountInfo[]> {
    return (await this.read()).accounts;
  }

  /** Adds or replaces an account added by command (new ones go last). */
  upsert(info: AccountInfo): Promise<void> {
    return this.update((d) => {
      const i = d.accounts.findIndex((a) => a.label === info.label);
      if (i >= 0) d.accounts[i] = info;
      else d.accounts.push(info);
    });
  }

  /** Forgets an account and every setting kept for it. @returns whether it was an account added by command */
  async remove(label: string): Promise<boolean> {
    let removed = false;
    await this.update((d) => {
      const before = d.accounts.length;
      d.accounts = d.accounts.filter((a) => a.label !== label);
      removed = d.accounts.length !== before;
      delete d.overrides[label];
      if (d.order) d.order = d.order.filter((l) => l !== label);
      if (d.primaryAccount === label) delete d.primaryAccount;
    });
    return removed;
  }

  /**
   * One read-modify-write of the whole file.
   * @throws Error as {@link read}, or the file system's when it cannot be written (nothing is changed then)
   */
  async update(mutate: (data: RegistryData) => void): Promise<void> {
    const data = await this.read();
    mutate(data);
    await fs.mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${process.pid}.tmp`;
    try {
      await fs.writeFile(tmp, JSON.stringify({ version: 1, ...data }, null, 2), { mode: 0o600 });
      await fs.rename(tmp, this.file);
    } catch (err) {
      await fs.rm(tmp, { force: true });
      throw err;
    }
  }
}
