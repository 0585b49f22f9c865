/**
 * Opening a shared pool (docs/shared-pool.md), the same for the CLI and the extension: the
 * connection to Redis and the shared credential store over this machine's copy. Each shell finds
 * the target and the key its own way (src/cli/sharedStore.ts: a config and key file;
 * src/vscode/sharedStore.ts: settings and SecretStorage) and calls {@link openSharedStore}.
 */
import * as path from 'node:path';
import type { CredentialStore } from '../accounts/types';
import type { ConnectionOptions, StoreConnection } from './connection';
import type { StoreKey } from './encryption';
import { SharedCredentialStore } from './sharedCredentials';
import type { StoreTarget } from '../config/storeUrl';

/** An open shared store: close it after the router. */
export interface SharedStore {
  connection: StoreConnection;
  credentials: SharedCredentialStore;
  close(): Promise<void>;
}

/**
 * Connects to `target` (waiting up to 3 s: an unreachable store is retried in the background while
 * the router serves from `local`) and opens the credentials sealed with `key` over `local`.
 * @param opts.keySource where the key comes from, for messages (a key file's path, "the key in SecretStorage"); `opts.stateDir`: the router's state folder, where the newest pair versions seen are kept (`pool-versions.json`, pairVersions.ts; undefined: in memory only)
 */
export async function openSharedStore(
  target: StoreTarget,
  key: StoreKey,
  local: CredentialStore,
  opts: Omit<ConnectionOptions, 'key'> & { keySource: string; stateDir?: string },
): Promise<SharedStore> {
  // Loaded only here: a router without a shared pool never loads the Redis client (ioredis and its dependencies).
  const { StoreConnection } = await import('./connection');
  const connection = new StoreConnection(target, { ...opts, key });
  await connection.start();
  const versionsFile = opts.stateDir === undefined ? undefined : path.join(opts.stateDir, 'pool-versions.json');
  const credentials = new SharedCredentialStore(local, connection, key, { log: opts.log, keySource: opts.keySource, now: opts.now, versionsFile });
  await credentials.reconcile();
  return {
    connection,
    credentials,
    close: async () => {
      credentials.close();
      await connection.close();
    },
  };
}
