/**
 * How a running CLI proxy notices the `accounts` commands: it polls the metadata of the state
 * directory's `accounts.json` and `credentials.json` (polling survives replacement by rename,
 * which is how both are written) and, once a burst of writes has settled, reports which changed.
 * `credentialChanges` tells which accounts' stored credentials changed since the last look.
 */
import { createHash } from 'node:crypto';
import { unwatchFile, watchFile, type Stats } from 'node:fs';
import type { CredentialStore } from '../accounts/types';

/** How often each file's metadata is polled, ms. */
const POLL_MS = 250;
/** Quiet time after the last change before it is reported, ms: one command's several writes come as one. */
const SETTLE_MS = 200;

/**
 * Calls `onChange` with the files that changed, at most once per settled burst.
 * @returns a function that stops watching
 */
export function watchFiles(files: readonly string[], onChange: (changed: ReadonlySet<string>) => void): () => void {
  let pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const listeners = files.map((file) => {
    const listener = (curr: Stats, prev: Stats) => {
      if (curr.mtimeMs === prev.mtimeMs && curr.ino === prev.ino && curr.size === prev.size) return;
      pending.add(file);
      clearTimeout(timer);
      timer = setTimeout(() => {
        const changed = pending;
        pending = new Set();
        onChange(changed);
      }, SETTLE_MS);
    };
    watchFile(file, { interval: POLL_MS, persistent: false }, listener);
    return () => unwatchFile(file, listener);
  });
  return () => {
    clearTimeout(timer);
    for (const stop of listeners) stop();
  };
}

/** Per label, a hash of the stored pair (never the pair itself). */
export type CredentialFingerprints = Map<string, string>;

/** The fingerprints of every stored pair. @throws Error when the store cannot be read */
export async function credentialFingerprints(store: CredentialStore): Promise<CredentialFingerprints> {
  const out: CredentialFingerprints = new Map();
  for (const label of await store.labels()) {
    const c = await store.get(label);
    if (c)
      out.set(
        label,
        createHash('sha256')
          .update(`${c.accessToken}\n${c.refreshToken ?? ''}`)
          .digest('hex'),
      );
  }
  return out;
}

/** Labels whose stored pair is new or different (`changed`) or gone (`removed`) between two looks. */
export function credentialChanges(before: CredentialFingerprints, after: CredentialFingerprints): { changed: string[]; removed: string[] } {
  return {
    changed: [...after].filter(([label, fp]) => before.get(label) !== fp).map(([label]) => label),
    removed: [...before.keys()].filter((label) => !after.has(label)),
  };
}
