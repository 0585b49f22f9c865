/**
 * Odd `anthropic-ratelimit-unified-*` values (a utilisation sent as a percent, a reset that does
 * not parse), logged once per account and note: a changed upstream format shows in the log
 * instead of silently skewing quota. Each account's headers are examined at most once a minute,
 * so a healthy pool's hot path pays one map lookup per answer.
 */
import { headerAnomalies, type HeaderBag } from '../../quota/headers';
import type { Logger } from '../log';

/** How often one account's headers are examined, ms. */
const CHECK_EVERY_MS = 60_000;
/** Distinct notes remembered per account (beyond it, new notes are still logged, old ones may repeat). */
const MAX_NOTES_PER_ACCOUNT = 32;

/** Per-account memory of what was already logged. */
export class HeaderNotes {
  private readonly checkedAtMs = new Map<string, number>();
  private readonly logged = new Map<string, Set<string>>();

  constructor(private readonly log: Logger) {}

  /** Examines `headers` of an answer from `account` at `nowMs` (epoch ms) unless done within the last minute. */
  check(account: string, headers: HeaderBag, nowMs: number): void {
    const last = this.checkedAtMs.get(account);
    if (last !== undefined && nowMs - last < CHECK_EVERY_MS) return;
    this.checkedAtMs.set(account, nowMs);
    const notes = headerAnomalies(headers);
    if (notes.length === 0) return;
    let seen = this.logged.get(account);
    if (!seen) this.logged.set(account, (seen = new Set()));
    for (const note of notes) {
      if (seen.has(note)) continue;
      if (seen.size >= MAX_NOTES_PER_ACCOUNT) seen.clear();
      seen.add(note);
      this.log.warn(`quota headers of ${account}: ${note}`);
    }
  }
}
