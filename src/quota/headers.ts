/**
 * Subscription ("unified") rate-limit response headers → QuotaSnapshot.
 *
 * Source: docs/anthropic-api.md#unified-rate-limit-headers: prefix
 * `anthropic-ratelimit-unified-`; `status`, `reset` (epoch SECONDS), `representative-claim`;
 * `5h-*` / `7d-*` and model-scoped `7d_<family>-*` windows with `-status`, `-utilization`
 * (a decimal string holding a FRACTION 0–1, possibly above 1) and `-reset`; `overage-*`. They arrive on
 * 200s, 429s and streamed 200s. Pure: the observation time is an argument.
 */
import { UTILIZATION_ANOMALY_FRACTION } from './constants';
import { isFamilyKey } from './family';
import { restamped } from './merge';
import { parseDecimal } from './number';
import { normalizeStatus } from './status';
import { parseResetMs } from './time';
import type { OverageInfo, QuotaSnapshot, QuotaWindow, ScopedQuotaWindow } from './types';

/** Response headers as Node and most HTTP clients expose them: any name case, arrays for repeats. */
export type HeaderBag = Record<string, string | string[] | undefined>;

/** The common prefix of every subscription rate-limit header (docs/anthropic-api.md#unified-rate-limit-headers). */
export const UNIFIED_PREFIX = 'anthropic-ratelimit-unified-';

/** `<prefix>7d_<family>-<field>`; the family may itself contain `-`, `_` or `.`. */
const SCOPED_HEADER = /^anthropic-ratelimit-unified-7d_(.+)-(status|utilization|reset)$/;

/**
 * Header names lower-cased → first value as a string. Arrays contribute their first element;
 * numbers are stringified; undefined, null, objects and empty arrays are skipped. When two names
 * differ only in case, the first one in iteration order wins. Never throws on a non-object.
 */
export function lowerCaseHeaders(headers: unknown): Map<string, string> {
  const out = new Map<string, string>();
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) return out;
  for (const [name, raw] of Object.entries(headers as Record<string, unknown>)) {
    const first: unknown = Array.isArray(raw) ? raw[0] : raw;
    let value: string | undefined;
    if (typeof first === 'string') value = first;
    else if (typeof first === 'number' && Number.isFinite(first)) value = String(first);
    if (value === undefined) continue;
    const key = name.toLowerCase();
    if (!out.has(key)) out.set(key, value);
  }
  return out;
}

/**
 * The `anthropic-ratelimit-unified-*` headers only, keyed by their lower-case name, first value
 * each (as {@link lowerCaseHeaders}, without copying the other headers of every response).
 */
function unifiedHeaders(headers: unknown): Map<string, string> {
  return firstLines(unifiedRaw(headers));
}

/** `[name, value, …]` as a map, the first line of each name winning. */
function firstLines(raw: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < raw.length; i += 2) if (!out.has(raw[i])) out.set(raw[i], raw[i + 1]);
  return out;
}

/** The unified headers in the bag's order as `[name, value, …]`: lower-case names, every line (repeats and case variants kept). */
function unifiedRaw(headers: unknown): string[] {
  const out: string[] = [];
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) return out;
  const bag = headers as Record<string, unknown>;
  for (const name in bag) {
    const key = unifiedKey(name);
    if (key === undefined || !Object.hasOwn(bag, name)) continue;
    const value = firstValue(bag[name]);
    if (value !== undefined) out.push(key, value);
  }
  return out;
}

/** Whether the bag's unified headers are `raw` ({@link unifiedRaw}), line for line, without building them. */
function sameUnified(headers: unknown, raw: readonly string[]): boolean {
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) return raw.length === 0;
  const bag = headers as Record<string, unknown>;
  let i = 0;
  for (const name in bag) {
    const key = unifiedKey(name);
    if (key === undefined || !Object.hasOwn(bag, name)) continue;
    const value = firstValue(bag[name]);
    if (value === undefined) continue;
    if (raw[i] !== key || raw[i + 1] !== value) return false;
    i += 2;
  }
  return i === raw.length;
}

/**
 * The lower-case name of a unified header, undefined for any other header. Names are lower-cased
 * only when they can start the prefix and are not lower case already (undici and node:http give
 * them lower case).
 */
function unifiedKey(name: string): string | undefined {
  // An anchored regex: V8's startsWith costs several times more on header-name strings.
  if (LOWER_CASE_NAME.test(name)) return name;
  return ANY_CASE_NAME.test(name) ? name.toLowerCase() : undefined;
}

/** A header's first value as a string: arrays give their first element, finite numbers their text; anything else none. */
function firstValue(raw: unknown): string | undefined {
  const first: unknown = Array.isArray(raw) ? raw[0] : raw;
  if (typeof first === 'string') return first;
  return typeof first === 'number' && Number.isFinite(first) ? String(first) : undefined;
}
/** A unified header whose whole name is lower case already (as undici and node:http give names). */
const LOWER_CASE_NAME = /^anthropic-ratelimit-unified-[^A-Z]+$/;
const ANY_CASE_NAME = /^anthropic-ratelimit-unified-./i;

/** A header utilisation string → FRACTION, or undefined when not a number or negative. Kept even above 1.5. */
function parseFraction(value: string | undefined): number | undefined {
  const n = parseDecimal(value);
  return n === undefined || n < 0 ? undefined : n;
}

/** A free-text header value: trimmed; blank → undefined. */
function text(value: string | undefined): string | undefined {
  const t = value?.trim();
  return t ? t : undefined;
}

/** `true`/`false`/`1`/`0` (any case) → boolean; anything else → undefined. */
function parseBool(value: string | undefined): boolean | undefined {
  const t = value?.trim().toLowerCase();
  if (t === 'true' || t === '1') return true;
  if (t === 'false' || t === '0') return false;
  return undefined;
}

/** The three header names of one window. */
interface WindowKeys {
  status: string;
  utilization: string;
  reset: string;
}
const windowKeys = (stem: string): WindowKeys => {
  const p = `${UNIFIED_PREFIX}${stem}`;
  return { status: `${p}-status`, utilization: `${p}-utilization`, reset: `${p}-reset` };
};
/** A header's full name from the part after the prefix. */
const NAME = (suffix: string): string => `${UNIFIED_PREFIX}${suffix}`;
const STATUS = NAME('status');
const RESET = NAME('reset');
const CLAIM = NAME('representative-claim');
const OVERAGE_STATUS = NAME('overage-status');
const OVERAGE_RESET = NAME('overage-reset');
const OVERAGE_UTILIZATION = NAME('overage-utilization');
const OVERAGE_IN_USE = NAME('overage-in-use');
const OVERAGE_DISABLED_REASON = NAME('overage-disabled-reason');
const SESSION_KEYS = windowKeys('5h');
const WEEKLY_KEYS = windowKeys('7d');

/*
 * Objects below get a member only when its value parsed (no `undefined` members, so snapshots
 * compare cleanly and serialise small), added one by one rather than copied or `delete`d:
 * objects that lose properties drop to V8's slow dictionary mode, and snapshots are read on
 * every routing decision.
 */

function readWindow(h: Map<string, string>, keys: WindowKeys): QuotaWindow | undefined {
  const status = normalizeStatus(h.get(keys.status));
  const utilization = parseFraction(h.get(keys.utilization));
  const resetAtMs = parseResetMs(h.get(keys.reset));
  if (status === undefined && utilization === undefined && resetAtMs === undefined) return undefined;
  const w: QuotaWindow = {};
  if (status !== undefined) w.status = status;
  if (utilization !== undefined) w.utilization = utilization;
  if (resetAtMs !== undefined) w.resetAtMs = resetAtMs;
  return w;
}

function readOverage(h: Map<string, string>): OverageInfo | undefined {
  const status = normalizeStatus(h.get(OVERAGE_STATUS));
  const resetAtMs = parseResetMs(h.get(OVERAGE_RESET));
  const utilization = parseFraction(h.get(OVERAGE_UTILIZATION));
  const inUse = parseBool(h.get(OVERAGE_IN_USE));
  const disabledReason = text(h.get(OVERAGE_DISABLED_REASON));
  if (status === undefined && resetAtMs === undefined && utilization === undefined && inUse === undefined && disabledReason === undefined) return undefined;
  const o: OverageInfo = {};
  if (status !== undefined) o.status = status;
  if (resetAtMs !== undefined) o.resetAtMs = resetAtMs;
  if (utilization !== undefined) o.utilization = utilization;
  if (inUse !== undefined) o.inUse = inUse;
  if (disabledReason !== undefined) o.disabledReason = disabledReason;
  return o;
}

/** Lower-case families that have at least one `7d_<family>-*` header. */
function scopedFamilies(h: Map<string, string>): string[] {
  const families = new Set<string>();
  for (const name of h.keys()) {
    const m = SCOPED_HEADER.exec(name);
    if (m && isFamilyKey(m[1])) families.add(m[1]);
  }
  return [...families];
}

/**
 * Parses the `anthropic-ratelimit-unified-*` headers of one response.
 *
 * @param headers response headers; names in any case, array values contribute their first element.
 * @param observedAtMs when the response was received, epoch ms; becomes `observedAtMs` of the
 *   snapshot and of every scoped window.
 * @returns a snapshot with `source: 'headers'`, or undefined when no header starts with
 *   `anthropic-ratelimit-unified-`. Statuses are trimmed and lower-cased; utilisations are
 *   FRACTIONS (a non-numeric or negative value leaves the field absent; a value above 1.5 is kept
 *   — see {@link headerAnomalies}); resets are epoch ms (headers send epoch seconds). A window,
 *   scoped window or overage block appears only when at least one of its fields parsed.
 *   Scoped windows are keyed by the lower-case family from `7d_<family>-*`. Never throws.
 */
export function parseUnifiedHeaders(headers: HeaderBag, observedAtMs: number): QuotaSnapshot | undefined {
  const h = unifiedHeaders(headers);
  return h.size === 0 ? undefined : snapshotOf(h, observedAtMs);
}

/** The snapshot of a non-empty set of unified headers (see {@link parseUnifiedHeaders}). */
function snapshotOf(h: Map<string, string>, observedAtMs: number): QuotaSnapshot {
  const scoped: Record<string, ScopedQuotaWindow> = {};
  for (const family of scopedFamilies(h)) {
    const w = readWindow(h, windowKeys(`7d_${family}`));
    if (w) scoped[family] = { ...w, observedAtMs };
  }

  const snap: QuotaSnapshot = { observedAtMs, source: 'headers', scoped };
  const unifiedStatus = normalizeStatus(h.get(STATUS));
  if (unifiedStatus !== undefined) snap.unifiedStatus = unifiedStatus;
  const unifiedResetAtMs = parseResetMs(h.get(RESET));
  if (unifiedResetAtMs !== undefined) snap.unifiedResetAtMs = unifiedResetAtMs;
  const claim = text(h.get(CLAIM))?.toLowerCase();
  if (claim !== undefined) snap.representativeClaim = claim;
  const session = readWindow(h, SESSION_KEYS);
  if (session) snap.session = session;
  const weekly = readWindow(h, WEEKLY_KEYS);
  if (weekly) snap.weekly = weekly;
  const overage = readOverage(h);
  if (overage) snap.overage = overage;
  return snap;
}

/**
 * {@link parseUnifiedHeaders} for the answers of each account, remembering the last headers it
 * parsed per account: an answer whose unified headers repeat the previous answer's line for line
 * (most do: the values move a percent at a time) is not parsed again — it gets the previous
 * snapshot at its own time, sharing its window objects (snapshots are never mutated).
 */
export class UnifiedHeaderReader {
  private readonly last = new Map<string, { raw: string[]; snapshot: QuotaSnapshot }>();

  /** The snapshot of `headers` observed at `observedAtMs` (epoch ms), as {@link parseUnifiedHeaders} gives it. */
  read(account: string, headers: HeaderBag, observedAtMs: number): QuotaSnapshot | undefined {
    const kept = this.last.get(account);
    if (kept !== undefined && sameUnified(headers, kept.raw)) return atTime(kept.snapshot, observedAtMs);
    const raw = unifiedRaw(headers);
    if (raw.length === 0) return undefined;
    const snapshot = snapshotOf(firstLines(raw), observedAtMs);
    this.last.set(account, { raw, snapshot });
    return snapshot;
  }

  /** Forgets what `account`'s answers said (it was removed). */
  forget(account: string): void {
    this.last.delete(account);
  }
}

/** A header snapshot observed again at `observedAtMs`: its scoped windows carry the time too. */
function atTime(s: QuotaSnapshot, observedAtMs: number): QuotaSnapshot {
  let scoped = s.scoped;
  for (const family in s.scoped) {
    if (scoped === s.scoped) scoped = {};
    // Assigned after the copy, not defined in the literal (merge.ts `restamped` says why).
    const w = { ...s.scoped[family] };
    w.observedAtMs = observedAtMs;
    scoped[family] = w;
  }
  return restamped(s, observedAtMs, scoped);
}

/**
 * Human-readable notes about suspicious unified header values, for the caller to log (this module
 * never logs). Reports, per header: a utilisation above 1.5 (probably percent sent where a
 * FRACTION is expected — docs/anthropic-api.md#units), a negative or non-numeric utilisation, and a
 * `*reset` value that does not parse. Empty when nothing is odd. Never throws.
 */
export function headerAnomalies(headers: HeaderBag): string[] {
  const notes: string[] = [];
  for (const [name, value] of lowerCaseHeaders(headers)) {
    if (!name.startsWith(UNIFIED_PREFIX)) continue;
    if (name.endsWith('utilization')) {
      const n = parseDecimal(value);
      if (n === undefined) notes.push(`${name}: not a number (${JSON.stringify(value.slice(0, 40))})`);
      else if (n < 0) notes.push(`${name}: negative utilisation ${n}`);
      else if (n > UTILIZATION_ANOMALY_FRACTION) notes.push(`${name}: ${n} exceeds ${UTILIZATION_ANOMALY_FRACTION} (percent sent as a fraction?)`);
    } else if (name.endsWith('reset') && parseResetMs(value) === undefined) {
      notes.push(`${name}: unparseable reset (${JSON.stringify(value.slice(0, 40))})`);
    }
  }
  return notes;
}
