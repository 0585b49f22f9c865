/**
 * Account metadata (label, kind, fallback, enabled, order) in global state;
 * the secrets live in SecretStorage. Every change bumps a version secret so
 * the other windows (and the leading proxy) hear of it through
 * `secrets.onDidChange` and re-read the list.
 */
import * as vscode from 'vscode';
import type { AccountInfo } from '../accounts/types';

const STATE_KEY = 'claudeRouter.accounts';
/** A secret whose change tells every window the account list changed. */
export const ACCOUNTS_VERSION_KEY = 'claudeRouter.accountsVersion';

export class AccountList {
  private readonly emitter = new vscode.EventEmitter<void>();
  /** Fires after this window changed the list. */
  readonly onDidChange = this.emitter.event;

  constructor(
    private readonly state: vscode.Memento,
    private readonly secrets: vscode.SecretStorage,
  ) {}

  all(): AccountInfo[] {
    const v = this.state.get<AccountInfo[]>(STATE_KEY, []);
    return Array.isArray(v) ? v.filter((a) => a && typeof a.label === 'string') : [];
  }

  get(label: string): AccountInfo | undefined {
    return this.all().find((a) => a.label === label);
  }

  async replace(accounts: AccountInfo[]): Promise<void> {
    await this.state.update(STATE_KEY, accounts);
    await this.secrets.store(ACCOUNTS_VERSION_KEY, String(Date.now()));
    this.emitter.fire();
  }

  /** Adds or updates an account (new ones go last). */
  upsert(info: AccountInfo): Promise<void> {
    const all = this.all();
    const i = all.findIndex((a) => a.label === info.label);
    if (i >= 0) all[i] = info;
    else all.push(info);
    return this.replace(all);
  }

  remove(label: string): Promise<void> {
    return this.replace(this.all().filter((a) => a.label !== label));
  }

  rename(from: string, to: string): Promise<void> {
    return this.replace(this.all().map((a) => (a.label === from ? { ...a, label: to } : a)));
  }

  /** Moves an account one place up (-1) or down (+1). */
  move(label: string, delta: -1 | 1): Promise<void> {
    const all = this.all();
    const i = all.findIndex((a) => a.label === label);
    const j = i + delta;
    if (i < 0 || j < 0 || j >= all.length) return Promise.resolve();
    [all[i], all[j]] = [all[j], all[i]];
    return this.replace(all);
  }

  dispose(): void {
    this.emitter.dispose();
  }
}
