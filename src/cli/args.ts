/** Shared pieces of the CLI's commands: config loading, port parsing, usage errors, signals. */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import * as path from 'node:path';
import { AccountRegistry } from '../accounts/registry';
import { loadConfigFile } from '../config/load';
import type { ConfigInput } from '../config/schema';
import { stateDirOf } from './runtime';

/** A usage or configuration error: printed without a stack, exit code 2. */
export class UsageError extends Error {}

/** Loads `--config` (or an empty config when absent). */
export async function configFromArgs(file: string | undefined): Promise<{ config: ConfigInput; path?: string }> {
  if (!file) return { config: {} };
  await assertReadableFile(file);
  const result = await loadConfigFile(file);
  if (!result.ok) throw new UsageError(`invalid configuration:\n${result.error}`);
  return { config: result.config, path: file };
}

/**
 * The configuration `start` runs: `--config` when given, else the defaults with the accounts
 * of the state directory (added by `accounts add|import`).
 * @throws UsageError when there is no config file and the state directory holds no account
 */
export async function configForStart(file: string | undefined): Promise<{ config: ConfigInput; path?: string }> {
  if (file) return configFromArgs(file);
  const config: ConfigInput = {};
  const dir = stateDirOf(config);
  const accounts = await new AccountRegistry(path.join(dir, 'accounts.json')).list();
  if (accounts.length === 0) {
    throw new UsageError(`no accounts in ${dir}: add one with \`claude-router accounts add\` or \`claude-router accounts import\`, or pass --config <proxy-config.yaml>`);
  }
  return { config };
}

/**
 * @throws UsageError naming the file and the problem in words when `file` is missing, a
 * directory, or not readable
 */
async function assertReadableFile(file: string): Promise<void> {
  try {
    const st = await stat(file);
    if (st.isDirectory()) throw new UsageError(`config file ${file} is a directory, not a file`);
    await access(file, constants.R_OK);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new UsageError(`config file not found: ${file}`);
    if (code === 'EACCES' || code === 'EPERM') throw new UsageError(`config file ${file} cannot be read: permission denied`);
    if (code === 'ENOTDIR') throw new UsageError(`config file not found: ${file} (a part of the path is not a directory)`);
    throw new UsageError(`config file ${file} cannot be read (${code ?? (err as Error).message})`);
  }
}

export function parsePort(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`--port: expected an integer 0–65535, got "${value}"`);
  return n;
}

/** Resolves on SIGINT or SIGTERM. */
export function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.on('SIGINT', done);
    process.on('SIGTERM', done);
  });
}
