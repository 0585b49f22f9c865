/**
 * The CLI's side of a shared pool (docs/shared-pool.md): `state-store` in the config → the
 * connection to Redis, this machine's key (a key file, created on first use) and the shared
 * credential store over `credentials.json`.
 */
import * as path from 'node:path';
import type { ConfigInput } from '../config/schema';
import type { FileCredentialStore } from '../accounts/fileCredentialStore';
import type { Logger } from '../proxy/log';
import { loadOrCreateKeyFile } from '../store/encryption';
import { openSharedStore, type SharedStore } from '../store/openStore';
import { parseStoreUrl } from '../config/storeUrl';
import { expandHome } from './stateDir';
import { checkPrivateFile } from './privateFiles';

/** The key file a config selects: `state-store-key-file`, else `<state-dir>/store.key`. */
export function storeKeyFile(config: ConfigInput, stateDir: string): string {
  return path.resolve(expandHome(config.stateStoreKeyFile ?? path.join(stateDir, 'store.key')));
}

/**
 * Connects to the config's `state-store` (waiting up to 3 s; an unreachable store is retried in
 * the background while the router serves from `local`) and loads or creates the key.
 * @throws Error naming `state-store`, `state-store-password-file` or `state-store-key-file` when one of them cannot be used (UnsafePathError when the key file belongs to another user or others may read it)
 */
export async function openConfiguredStore(config: ConfigInput, stateDir: string, local: FileCredentialStore, log: Logger, now: () => number): Promise<SharedStore> {
  const target = parseStoreUrl(config.stateStore!, config.stateStorePasswordFile && path.resolve(expandHome(config.stateStorePasswordFile)));
  const keyFile = storeKeyFile(config, stateDir);
  // A key file others can read seals nothing from them; one another user owns is a key they chose.
  checkPrivateFile(keyFile, 'state-store-key-file');
  const { key, created } = loadOrCreateKeyFile(keyFile);
  if (created) {
    log.info(
      `state store: created the key ${keyFile} (mode 0600) that tokens are sealed with in ${target.display}; copy this file to every other machine of the pool (to its <state-dir>/store.key, or the path its state-store-key-file names) before its router first uses the store`,
    );
  }
  return openSharedStore(target, key, local, { log, now, keySource: keyFile, stateDir });
}
