/**
 * Sealed pairs carry their version (docs/security.md#the-shared-store): the version a pair is
 * written at in the pool is sealed with it (so Redis cannot change it), and every router keeps the
 * newest version it has seen per account in a small file next to its credentials. A pair older
 * than that — an old blob written back into Redis, whatever the hash's `v` says — is refused: the
 * router never adopts it, nor overwrites its local copy with it. A blob sealed before versions
 * were (no version inside) reads as version 0.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Credentials } from '../accounts/types';
import { open, seal, type StoreKey } from './encryption';

/** The field of the sealed JSON that holds the pair's version. */
const VERSION_FIELD = 'poolVersion';

/** Seals `creds` for the record `aad` with its pool version `version` (≥ 1). */
export function sealPair(key: StoreKey, creds: Credentials, version: number, aad: string): string {
  return seal(key, JSON.stringify({ ...creds, [VERSION_FIELD]: version }), aad);
}

/**
 * Opens what {@link sealPair} made (or an older blob without a version: version 0).
 * @throws Error as encryption.ts `open` (another key, altered, moved), or when it holds no JSON
 */
export function openPair(key: StoreKey, blob: string, aad: string): { creds: Credentials; version: number } {
  const { [VERSION_FIELD]: version, ...creds } = JSON.parse(open(key, blob, aad)) as Credentials & { [VERSION_FIELD]?: unknown };
  return { creds, version: typeof version === 'number' && Number.isSafeInteger(version) && version > 0 ? version : 0 };
}

/** The newest pool version this router has seen per account, kept in `file` (JSON, mode 0600) when one is given. */
export class PairVersions {
  private readonly newest = new Map<string, number>();
  /** `label NUL version` of the older pairs refused so far (each is said once). */
  private readonly refusedOnce = new Set<string>();

  /**
   * @param file where the versions are kept across restarts (e.g. `<state-dir>/pool-versions.json`); undefined: in memory only
   * @param log where a file that cannot be read or written is reported (the versions then hold for this run)
   */
  constructor(
    private readonly file: string | undefined,
    private readonly log: { warn(m: string): void },
  ) {
    if (!file) return;
    try {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as unknown;
      if (typeof saved === 'object' && saved !== null)
        for (const [label, v] of Object.entries(saved)) if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) this.newest.set(label, v);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        log.warn(`state store: ${file} cannot be read (${(err as Error).message.split('\n')[0]}); the newest versions of the pool's pairs are known again as they are seen`);
    }
  }

  /** The newest version of `label`'s pair seen (0: none). */
  get(label: string): number {
    return this.newest.get(label) ?? 0;
  }

  /** Notes that `label`'s pair at `version` was seen (adopted or written); saved when it is newer. */
  note(label: string, version: number): void {
    if (version <= this.get(label)) return;
    this.newest.set(label, version);
    if (!this.file) return;
    const tmp = `${this.file}.${process.pid}.tmp`;
    try {
      mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
      writeFileSync(tmp, `${JSON.stringify(Object.fromEntries(this.newest))}\n`, { mode: 0o600 });
      renameSync(tmp, this.file);
    } catch (err) {
      this.log.warn(
        `state store: ${this.file} cannot be written (${(err as NodeJS.ErrnoException).code ?? 'error'}); the newest versions of the pool's pairs hold until this router stops`,
      );
    }
  }

  /**
   * The version a new pair of `label` is sealed at: after the hash's `v` (`stored`, which Redis alone
   * could lower) and after every version seen here, so no router that saw the old pair refuses it.
   */
  next(label: string, stored: string | undefined): number {
    const v = Number(stored || 0);
    return Math.max(Number.isSafeInteger(v) ? v + 1 : 1, this.get(label) + 1);
  }

  /** Says once per account and version that the pool's pair of `label` at `version` was refused as older than one seen. */
  refused(label: string, version: number): void {
    const key = `${label}\0${version}`;
    if (this.refusedOnce.has(key)) return;
    this.refusedOnce.add(key);
    this.log.warn(
      `state store: refused the pool's pair of "${label}": it is version ${version}, older than version ${this.get(label)} this router has seen (an old pair written back into Redis); this router keeps its own copy and never sends that pair's refresh token`,
    );
  }
}
