/**
 * Hot reload: polls the config file's metadata (robust against editors that
 * replace the file by rename) and hands each changed, valid version to
 * `onConfig`; an invalid version — or one with no settings at all, the
 * moment between an editor's truncate and write — goes to `onError` and the running
 * configuration stays. Poll interval 500 ms keeps a reload within 2 s.
 */
import { watchFile, unwatchFile, type Stats } from 'node:fs';
import { loadConfigFile } from './load';
import type { ConfigInput } from './schema';

export interface ConfigWatcher {
  close(): void;
}

export function watchConfigFile(file: string, onConfig: (config: ConfigInput) => void | Promise<void>, onError: (message: string) => void, intervalMs = 500): ConfigWatcher {
  let running: Promise<void> = Promise.resolve();
  const listener = (curr: Stats, prev: Stats) => {
    if (curr.mtimeMs === prev.mtimeMs && curr.size === prev.size && curr.ino === prev.ino) return;
    running = running.then(async () => {
      const result = await loadConfigFile(file, { refuseEmpty: true });
      if (result.ok) await onConfig(result.config);
      else onError(result.error);
    });
  };
  watchFile(file, { interval: intervalMs, persistent: false }, listener);
  return { close: () => unwatchFile(file, listener) };
}
