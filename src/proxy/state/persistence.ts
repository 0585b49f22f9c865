/**
 * Saves RouterState (quota snapshots, cooldowns, sign-in flags, bindings — no
 * secrets) to a JSON file shortly after it changes and at close, and restores
 * it at start. A file that cannot be read restores nothing: the router starts
 * empty, the seed's default.
 *
 * Several routers can share one file (VS Code windows of one profile; only the
 * leading window serves). The rule that keeps the file from going back in time:
 * - every save writes `generation` = (the newest generation this router has
 *   seen) + 1, and `savedAtMs`; a file without `generation` counts as 0;
 * - before writing, the saver checks the file: when its generation is higher
 *   than the one this state was last loaded from or saved as, another router
 *   saved since, and its state is folded in first (`RouterState.absorb`: the
 *   newest evidence, the later cooldown, the later binding per session), so a
 *   save never replaces newer state with older;
 * - a router that does not serve (a following window, or a leader that has
 *   released the port) does not save (`follow()`) — except once, after the release, to hand
 *   over what the requests that ended in the grace time changed (`handOver()`); when it takes over
 *   (`lead()`), it replaces its state with the file's if the file is newer than
 *   what it loaded (or, when the file cannot be read at that moment, at the
 *   first read that works), then saves from then on; a file of a version
 *   without generations is newer when its `savedAtMs` is later;
 * - close saves only what changed since the last save.
 * Two routers writing within the same few milliseconds can still lose one
 * write (there is no file lock); the next save of either repairs it.
 *
 * The usage history (usageHistory.ts: 7 days per account at one-minute resolution) changes with
 * every request, so it has its own file next to the state, `usage-history.json`, written by the
 * router that saves at most once a minute (and at flush and close), restored at start; a router
 * taking over (`lead()`) adds the file's intervals it does not hold itself.
 */
import { copyFileSync, promises as fs, readFileSync, statSync, type Stats } from 'node:fs';
import * as path from 'node:path';
import { RouterState } from './routerState';
import type { SavedRouterState } from './savedState';

export interface StatePersistence {
  /** Whether a saved state was restored at start. */
  readonly restored: boolean;
  /** Writes now, if this router saves (see `lead`/`follow`). */
  flush(): Promise<void>;
  /**
   * This router serves from now on: loads the file's state in place of its own when the
   * file is newer than what this router loaded or saved, then saves after each change.
   * Synchronous, so no request is served between the role change and the load.
   * @returns true when newer state was loaded from the file
   */
  lead(): boolean;
  /** Another router serves and owns the file: stop saving (changes are kept in memory only). */
  follow(): void;
  /**
   * After `follow()` and the release of the port: folds into the file what changed here since
   * `follow()` — bindings served, cooldowns set, quota evidence observed by the requests that ended
   * in the grace time — and nothing older, so what the router that took over has cleared stays
   * cleared; that router folds the news in at its next save (the file's generation is newer).
   * Nothing when nothing changed; never throws (a failure is logged).
   */
  handOver(): Promise<void>;
  /** Stops listening for changes; saves once more if this router saves. */
  close(): Promise<void>;
}

export interface PersistOptions {
  /** e.g. `<state-dir>/router-state.json` */
  file: string;
  now?: () => number;
  /** Delay between a change and the write, ms (default 1 000). */
  debounceMs?: number;
  /** Save from the start (default true); false waits for `lead()` (a window that may follow). */
  saving?: boolean;
  /** Told when the file held state saved by another router that was folded in. */
  log?: (message: string) => void;
  /** The usage history's file (default `usage-history.json` next to `file`). */
  historyFile?: string;
  /** How often the usage history is written while this router saves, ms (default 60 000). */
  historyEveryMs?: number;
}

/** What the file holds, with its generation and identity (to skip parsing an unchanged file). */
interface OnDisk {
  saved: SavedRouterState | undefined;
  /** 0 for a file written by a version without generations. */
  generation: number;
  /** When it was saved, epoch ms (0 when unknown). */
  savedAtMs: number;
  stamp: string;
}

/** The file's identity: the same stamp means nobody wrote it since. */
function stampOf(st: Stats): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}`;
}

function readOnDisk(file: string): OnDisk | undefined {
  try {
    const stamp = stampOf(statSync(file));
    const saved = JSON.parse(readFileSync(file, 'utf8')) as SavedRouterState;
    return {
      saved,
      generation: typeof saved?.generation === 'number' ? saved.generation : 0,
      savedAtMs: typeof saved?.savedAtMs === 'number' ? saved.savedAtMs : 0,
      stamp,
    };
  } catch {
    return undefined;
  }
}

/** Whether the file exists (a file that exists but cannot be read is not "no saved state"). */
function exists(file: string): boolean {
  try {
    statSync(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * A saved state that cannot be read at start-up (corrupt, cut short) is copied aside to
 * `<file>.unreadable` before the next save replaces it, and said in the log: the router starts
 * without its bindings and cooldowns, and the old file stays for a person to look at.
 */
function keepUnreadable(file: string, log: ((message: string) => void) | undefined): void {
  const aside = `${file}.unreadable`;
  try {
    copyFileSync(file, aside);
    log?.(`state: ${path.basename(file)} could not be read; starting without its bindings and cooldowns (the file is kept as ${path.basename(aside)})`);
  } catch (err) {
    log?.(
      `state: ${path.basename(file)} could not be read, nor kept aside (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); starting without its bindings and cooldowns`,
    );
  }
}

/** Adds the intervals of the saved usage history in `file` that `state` does not hold; nothing when it cannot be read. */
function loadHistory(state: RouterState, file: string, nowMs: number): void {
  try {
    state.history.load(JSON.parse(readFileSync(file, 'utf8')), nowMs);
  } catch {
    /* no history yet, or unreadable: it starts empty */
  }
}

/** Writes `text` to `file` through a temporary file of this process's own, so a reader never sees half of it. */
async function writeAtomic(file: string, text: string): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, text, { mode: 0o600 });
  await fs.rename(tmp, file);
}

/** The part of `saved` that changed at or after `sinceMs` (epoch ms): bindings served, cooldowns set and quota evidence observed since; null when nothing did. */
function changedSince(saved: SavedRouterState, sinceMs: number): SavedRouterState | null {
  const since = <T>(record: Record<string, T>, at: (v: T) => number): Record<string, T> => Object.fromEntries(Object.entries(record).filter(([, v]) => at(v) >= sinceMs));
  const scoped = Object.fromEntries(
    Object.entries(saved.scopedCooldowns ?? {})
      .map(([account, families]) => [account, since(families, (c) => c.setAtMs)] as const)
      .filter(([, families]) => Object.keys(families).length > 0),
  );
  const late: SavedRouterState = {
    version: 1,
    savedAtMs: saved.savedAtMs,
    snapshots: since(saved.snapshots, (q) => q.observedAtMs),
    cooldowns: since(saved.cooldowns, (c) => c.setAtMs),
    needsSignIn: {},
    bindings: saved.bindings.filter((b) => b.lastServedAtMs >= sinceMs),
    scopedCooldowns: scoped,
  };
  const empty = late.bindings.length === 0 && [late.snapshots, late.cooldowns, scoped].every((r) => Object.keys(r).length === 0);
  return empty ? null : late;
}

/**
 * Restores `state` from `opts.file` and saves it there after changes.
 * Never throws: a write that fails is retried with the next change.
 */
export function persistState(state: RouterState, opts: PersistOptions): StatePersistence {
  const { file, now = Date.now, debounceMs = 1_000, log } = opts;
  const historyFile = opts.historyFile ?? path.join(path.dirname(file), 'usage-history.json');
  let saving = opts.saving ?? true;
  loadHistory(state, historyFile, now());
  const first = readOnDisk(file);
  if (!first && exists(file)) keepUnreadable(file, log);
  const restored = first !== undefined && state.restore(first.saved, now());
  /** The generation this state was last loaded from or saved as, and that save's time. */
  let basis = restored ? first.generation : 0;
  let basisSavedAtMs = restored ? first.savedAtMs : 0;
  /** Took over while the file could not be read: the first readable copy replaces this state. */
  let replacePending = false;
  /** Saved by another router since our load or save: a higher generation, or a later save by a version without generations. */
  const newer = (disk: OnDisk) => disk.generation > basis || (disk.generation === 0 && disk.savedAtMs > basisSavedAtMs);
  /** The file's stamp after that load or save. */
  let ownStamp = restored ? first.stamp : '';
  let dirty = false;
  /** When this router last stopped saving (`follow()`), epoch ms; undefined while it saves. */
  let followedAtMs: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();

  const save = async () => {
    if (!saving) return;
    dirty = false;
    const stamp = await fs.stat(file).then(stampOf, () => '');
    if (stamp && stamp !== ownStamp) {
      const disk = readOnDisk(file);
      if (disk && replacePending) {
        if (newer(disk)) state.replaceWith(disk.saved, now());
        replacePending = false;
      } else if (disk && newer(disk) && state.absorb(disk.saved, now())) {
        log?.(`state: ${path.basename(file)} was saved by another router (generation ${disk.generation}); its state is merged in`);
      }
      if (disk) basis = Math.max(basis, disk.generation);
    }
    const generation = basis + 1;
    const saved = { ...state.toSaved(now()), generation };
    await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    // A temporary file of this process's own: two windows saving at once never mix their bytes.
    const tmp = `${file}.${process.pid}.tmp`;
    await fs.writeFile(tmp, JSON.stringify(saved), { mode: 0o600 });
    await fs.rename(tmp, file);
    basis = generation;
    basisSavedAtMs = saved.savedAtMs;
    ownStamp = await fs.stat(file).then(stampOf, () => '');
  };
  const write = () => {
    timer = undefined;
    writing = writing.then(save).catch((err: unknown) => {
      dirty = true;
      log?.(`state: ${path.basename(file)} was not saved (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); the next change tries again`);
    });
    return writing;
  };
  const onChange = () => {
    dirty = true;
    if (!saving) return;
    if (!timer) timer = setTimeout(() => void write(), debounceMs);
    timer.unref?.();
  };
  state.events.on('changed', onChange);
  let historyWriting: Promise<void> = Promise.resolve();
  const writeHistory = () => {
    if (!saving) return historyWriting;
    historyWriting = historyWriting
      .then(() => writeAtomic(historyFile, JSON.stringify(state.history.toSaved(now()))))
      .catch((err: unknown) => log?.(`state: ${path.basename(historyFile)} was not saved (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`));
    return historyWriting;
  };
  const historyTimer = setInterval(() => void writeHistory(), opts.historyEveryMs ?? 60_000);
  historyTimer.unref?.();
  return {
    restored,
    flush: () => {
      if (timer) clearTimeout(timer);
      return Promise.all([write(), writeHistory()]).then(() => undefined);
    },
    lead: () => {
      loadHistory(state, historyFile, now());
      const disk = readOnDisk(file);
      let loaded = false;
      if (disk && newer(disk) && state.replaceWith(disk.saved, now())) {
        basis = disk.generation;
        basisSavedAtMs = disk.savedAtMs;
        ownStamp = disk.stamp;
        loaded = true;
      }
      // Unreadable now (another window's rename in progress, say): its state replaces ours at the first read that works.
      if (!disk && exists(file)) replacePending = true;
      saving = true;
      followedAtMs = undefined;
      if (dirty) onChange();
      return loaded;
    },
    follow: () => {
      if (saving) followedAtMs = now();
      saving = false;
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
    handOver: async () => {
      await Promise.resolve(); // a change signalled just before (RouterState emits on a microtask) is seen
      if (saving || followedAtMs === undefined || !dirty) return;
      await writing;
      const late = changedSince(state.toSaved(now()), followedAtMs);
      dirty = false;
      if (!late) return;
      try {
        const disk = readOnDisk(file);
        const merged = new RouterState(state.affinity.idleTtl);
        if (disk) merged.restore(disk.saved, now());
        merged.absorb(late, now());
        await writeAtomic(file, JSON.stringify({ ...merged.toSaved(now()), generation: Math.max(basis, disk?.generation ?? 0) + 1 }));
      } catch (err) {
        log?.(`state: the changes of the last requests were not handed over in ${path.basename(file)} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
      }
    },
    close: async () => {
      await Promise.resolve(); // a change signalled just before (RouterState emits on a microtask) is seen
      state.events.off('changed', onChange);
      if (timer) clearTimeout(timer);
      clearInterval(historyTimer);
      await writeHistory();
      // Nothing changed since the last save: writing again would only take a generation.
      await (dirty ? write() : writing);
    },
  };
}
