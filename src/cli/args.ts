/** Shared pieces of the CLI's commands: config loading, port parsing, usage errors, signals. */
import { loadConfigFile } from '../config/load';
import type { ConfigInput } from '../config/schema';

/** A usage or configuration error: printed without a stack, exit code 2. */
export class UsageError extends Error {}

/** Loads `--config` (or an empty config when absent and `optional`). */
export async function configFromArgs(file: string | undefined, optional: boolean): Promise<{ config: ConfigInput; path?: string }> {
  if (!file) {
    if (optional) return { config: {} };
    throw new UsageError('--config <proxy-config.yaml> is required');
  }
  const result = await loadConfigFile(file);
  if (!result.ok) throw new UsageError(`invalid configuration:\n${result.error}`);
  return { config: result.config, path: file };
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
