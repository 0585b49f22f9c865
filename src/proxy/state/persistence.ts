/**
 * Saves RouterState (snapshots, cooldowns, bindings — no secrets) to a JSON
 * file shortly after it changes, and restores it at start. A file that cannot
 * be read restores nothing: the router starts empty, the seed's default.
 */
import { promises as fs, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { RouterState } from './routerState';

export interface StatePersistence {
  /** Writes now (used at shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * @param file e.g. `<state-dir>/router-state.json`
 * @param debounceMs delay between a change and the write
 * @returns whether a saved state was restored, and the saver
 */
export function persistState(state: RouterState, file: string, now: () => number = Date.now, debounceMs = 1_000): { restored: boolean; saver: StatePersistence } {
  let restored = false;
  try {
    restored = state.restore(JSON.parse(readFileSync(file, 'utf8')), now());
  } catch {
    restored = false;
  }
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();
  const write = () => {
    timer = undefined;
    const data = JSON.stringify(state.toSaved(now()));
    writing = writing.then(async () => {
      await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
      const tmp = `${file}.tmp`;
      await fs.writeFile(tmp, data, { mode: 0o600 });
      await fs.rename(tmp, file);
    }).catch(() => undefined);
    return writing;
  };
  const onChange = () => {
    if (!timer) timer = setTimeout(write, debounceMs);
    timer.unref?.();
  };
  state.events.on('changed', onChange);
  return {
    restored,
    saver: {
      flush: () => {
        if (timer) clearTimeout(timer);
        return write();
      },
      close: async () => {
        state.events.off('changed', onChange);
        if (timer) clearTimeout(timer);
        await write();
      },
    },
  };
}
