/** Shared pieces of the CLI's commands: config loading, port parsing, usage errors, signals. */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import * as path from 'node:path';
import { AccountRegistry } from '../accounts/registry';
import { loadConfigFile } from '../config/load';
import { RESERVED_LABELS, type ConfigInput } from '../config/schema';
import { stateDirOf } from './runtime';

/** A usage or configuration error: printed without a stack, exit code 2. */
export class UsageError extends Error {}

/** The options every command takes (commander's `optsWithGlobals()`). */
export interface GlobalOptions {
  /** `--state-dir`: overrides the config file's `state-dir` and the default. */
  stateDir?: string;
  /** False with `--no-color`. */
  color?: boolean;
}

const LABEL = /^[^\u0000-\u001f\u007f]{1,64}$/;

/** An account label: 1–64 characters, no control characters, not blank, not a reserved name (as the config schema's). */
export function validLabel(l: string): boolean {
  return LABEL.test(l) && l.trim().length > 0 && !RESERVED_LABELS.has(l);
}

/** Loads `--config` (or an empty config when absent); `--state-dir` replaces its `state-dir`. */
export async function configFromArgs(file: string | undefined, stateDir?: string): Promise<{ config: ConfigInput; path?: string }> {
  if (!file) return { config: stateDir === undefined ? {} : { stateDir } };
  await assertReadableFile(file);
  const result = await loadConfigFile(file);
  if (!result.ok) throw new UsageError(`invalid configuration:\n${result.error}`);
  return { config: stateDir === undefined ? result.config : { ...result.config, stateDir }, path: file };
}

/**
 * The configuration `start` runs: `--config` when given, else the defaults with the accounts
 * of the state directory (added by `accounts add|import`).
 * @throws UsageError when there is no config file and the state directory holds no account
 */
export async function configForStart(file: string | undefined, stateDir?: string): Promise<{ config: ConfigInput; path?: string }> {
  if (file) return configFromArgs(file, stateDir);
  const config: ConfigInput = stateDir === undefined ? {} : { stateDir };
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
