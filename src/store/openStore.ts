/**
 * Opening a shared pool (docs/shared-pool.md), the same for the CLI and the extension: the
 * connection to Redis and the shared credential store over this machine's copy. Each shell finds
 * the target and the key its own way (a config and key file; settings and SecretStorage).
 */
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
 * @param opts.keySource where the key comes from, for messages (a key file's path, "the key in SecretStorage"); `opts.versionsFile`: where the newest pair versions seen are kept (pairVersions.ts)
 */
export async function openSharedStore(
  target: StoreTarget,
  key: StoreKey,
  local: CredentialStore,
  opts: Omit<ConnectionOptions, 'key'> & { keySource: string; versionsFile?: string },
): Promise<SharedStore> {
  // Loaded only here: a router without a shared pool never loads the Redis client (ioredis and its dependencies).
  const { StoreConnection } = await import('./connection');
  const connection = new StoreConnection(target, { ...opts, key });
  await connection.start();
  const credentials = new SharedCredentialStore(local, connection, key, { log: opts.log, keySource: opts.keySource, now: opts.now, versionsFile: opts.versionsFile });
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
