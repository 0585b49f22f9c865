/**
 * Per-account history for the status panel's charts, kept by the engine (RouterState) and saved
 * with the rest of the state (persistence.ts, its own file `usage-history.json`): each account's
 * 5-hour and weekly utilisation (the last sample of an interval, its cooldown and window resets)
 * and the requests it served and their tokens (sums over the interval).
 *
 * Bounded whatever the uptime — two ring buffers per account, typed arrays of 33 bytes a slot:
 * - the last 7 days at one-minute resolution: 7 × 1,440 = 10,080 slots;
 * - the last hour at 10-second resolution: 360 slots (so a short burst of traffic draws a line).
 * That is 10,440 slots, 345 KB of memory per configured account; on disk at most 600 KB
 * per account (a busy minute in every slot; an idle account writes a few bytes a minute), see
 * {@link HISTORY_BOUND}. Removed accounts are forgotten. Pure: the time is always an argument.
 */

/** A chart's time span. */
export type HistoryRange = 'hour' | 'day' | 'week';

/** The ranges, shortest first. */
export const HISTORY_RANGES: readonly HistoryRange[] = ['hour', 'day', 'week'];

/** The two stored tiers: slot width (ms) and slot count. */
export const HISTORY_TIERS = Object.freeze({
  /** The last hour every 10 s. */
  fine: Object.freeze({ stepMs: 10_000, slots: 360 }),
  /** The last 7 days every minute. */
  minute: Object.freeze({ stepMs: 60_000, slots: 7 * 1_440 }),
});
type Tier = keyof typeof HISTORY_TIERS;

/**
 * What a range draws: the tier it reads and how many of its slots make one point (the day: 5-minute
 * points, 288; the week: 30-minute points, 336), so a chart never gets more than a few hundred points.
 */
export const RANGE_VIEW: Readonly<Record<HistoryRange, { tier: Tier; per: number; spanMs: number }>> = Object.freeze({
  hour: { tier: 'fine', per: 1, spanMs: 3_600_000 },
  day: { tier: 'minute', per: 5, spanMs: 86_400_000 },
  week: { tier: 'minute', per: 30, spanMs: 7 * 86_400_000 },
});

/** The documented bound (docs/architecture.md#usage-history): slots and bytes per configured account. */
export const HISTORY_BOUND = Object.freeze({
  slotsPerAccount: HISTORY_TIERS.fine.slots + HISTORY_TIERS.minute.slots,
  memoryBytesPerAccount: (HISTORY_TIERS.fine.slots + HISTORY_TIERS.minute.slots) * 33,
  /** The most a saved account takes in `usage-history.json` (every slot busy, every number at its longest). */
  diskBytesPerAccount: 600 * 1024,
});

/** A drop of the 5-hour utilisation by at least this fraction between two samples is drawn as a reset. */
const RESET_DROP = 0.05;

/** Tokens of the requests an account served, by kind. */
export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
}

/** One point as the panel draws it: an interval of the range. */
export interface UsagePoint extends TokenCounts {
  /** Epoch ms of the interval's start. */
  t: number;
  /** 5-hour window used at the interval's last sample, fraction 0–1 (may exceed 1); null when not sampled then. */
  session: number | null;
  /** Weekly window used at the interval's last sample, fraction 0–1; null when not sampled then. */
  weekly: number | null;
  /** The router held the account in a cooldown at a sample of the interval. */
  cooling: boolean;
  /** The 5-hour utilisation dropped by at least {@link RESET_DROP} within the interval (a window reset). */
  reset: boolean;
  /** Requests the account served in the interval. */
  requests: number;
}

/** One account's points over a range, oldest first; only intervals with a sample or a request. */
export interface UsageSeries {
  label: string;
  range: HistoryRange;
  /** The width of one point's interval, ms. */
  stepMs: number;
  /** Epoch ms of the range's start and end (the end is the `now` it was read at). */
  fromMs: number;
  toMs: number;
  points: UsagePoint[];
}

/** A utilisation sample of one account. */
export interface UsageSample {
  /** 5-hour window used, fraction (null: unknown). */
  session: number | null;
  /** Weekly window used, fraction (null: unknown). */
  weekly: number | null;
  /** A cooldown holds the account now. */
  cooling: boolean;
}

const COOLING = 1;
const RESET = 2;
const SAMPLED = 4;
const U32_MAX = 0xffff_ffff;
const TOKEN_KINDS = 4;

/** One ring buffer: slot i holds interval `stamp[i]` (interval = floor(t / stepMs)); 33 bytes a slot. */
class Ring {
  readonly stamp: Int32Array;
  readonly session: Float32Array;
  readonly weekly: Float32Array;
  readonly flags: Uint8Array;
  readonly requests: Uint32Array;
  /** Input, output, cache-read, cache-creation tokens: four per slot. */
  readonly tokens: Uint32Array;

  constructor(
    readonly stepMs: number,
    readonly slots: number,
  ) {
    this.stamp = new Int32Array(slots).fill(-1);
    this.session = new Float32Array(slots);
    this.weekly = new Float32Array(slots);
    this.flags = new Uint8Array(slots);
    this.requests = new Uint32Array(slots);
    this.tokens = new Uint32Array(slots * TOKEN_KINDS);
  }

  /** The slot of the interval holding `t`, cleared when it held an older interval. */
  slot(t: number): number {
    const interval = Math.floor(t / this.stepMs);
    const i = interval % this.slots;
    if (this.stamp[i] !== interval) {
      this.stamp[i] = interval;
      this.session[i] = NaN;
      this.weekly[i] = NaN;
      this.flags[i] = 0;
      this.requests[i] = 0;
      this.tokens.fill(0, i * TOKEN_KINDS, (i + 1) * TOKEN_KINDS);
    }
    return i;
  }

  sample(t: number, s: UsageSample, reset: boolean): void {
    const i = this.slot(t);
    this.session[i] = s.session ?? NaN;
    this.weekly[i] = s.weekly ?? NaN;
    // A cooldown or reset seen earlier in the interval stays marked.
    this.flags[i] |= SAMPLED | (s.cooling ? COOLING : 0) | (reset ? RESET : 0);
  }

  count(t: number, tokens: TokenCounts | null): void {
    const i = this.slot(t);
    this.requests[i] = Math.min(U32_MAX, this.requests[i] + 1);
    if (!tokens) return;
    const k = i * TOKEN_KINDS;
    this.add(k, tokens.inputTokens);
    this.add(k + 1, tokens.outputTokens);
    this.add(k + 2, tokens.cacheReadTokens);
    this.add(k + 3, tokens.cacheCreationTokens);
  }

  /** Adds `n` tokens (rounded, never negative) to cell `at`, saturating at the cell's maximum. */
  private add(at: number, n: number): void {
    this.tokens[at] = Math.min(U32_MAX, this.tokens[at] + Math.max(0, Math.round(n) || 0));
  }

  /** Whether slot i holds an interval within the last `slots` intervals up to `now`. */
  live(i: number, now: number): boolean {
    const last = Math.floor(now / this.stepMs);
    return this.stamp[i] > last - this.slots && this.stamp[i] <= last;
  }

  /** The points of the last `slots` intervals up to `now`, `per` intervals to a point, oldest first. */
  read(now: number, per: number, span: number): UsagePoint[] {
    const last = Math.floor(now / this.stepMs);
    const first = last - Math.min(this.slots, Math.ceil(span / this.stepMs)) + 1;
    const out: UsagePoint[] = [];
    let cur: UsagePoint | null = null;
    for (let interval = first; interval <= last; interval++) {
      const i = ((interval % this.slots) + this.slots) % this.slots;
      if (this.stamp[i] !== interval) continue;
      const start = Math.floor(interval / per) * per * this.stepMs;
      if (!cur || cur.t !== start) {
        cur = { t: start, session: null, weekly: null, cooling: false, reset: false, requests: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };
        out.push(cur);
      }
      const f = this.flags[i];
      if (f & SAMPLED) {
        cur.session = fraction(this.session[i]);
        cur.weekly = fraction(this.weekly[i]);
      }
      cur.cooling ||= (f & COOLING) !== 0;
      cur.reset ||= (f & RESET) !== 0;
      const k = i * TOKEN_KINDS;
      cur.requests += this.requests[i];
      cur.inputTokens += this.tokens[k];
      cur.outputTokens += this.tokens[k + 1];
      cur.cacheReadTokens += this.tokens[k + 2];
      cur.cacheCreationTokens += this.tokens[k + 3];
    }
    return out;
  }
}

/** A stored float32 back to the fraction it was (4 decimals), or null for NaN (unknown). */
function fraction(v: number): number | null {
  return Number.isNaN(v) ? null : Math.round(v * 10_000) / 10_000;
}

interface AccountHistory {
  rings: Record<Tier, Ring>;
  lastSession: number | null;
}

/** One tier of one account as saved: parallel arrays, one entry per live slot, oldest first. */
export interface SavedTier {
  /** Interval numbers (floor(t / stepMs)); the first absolute, each next one the difference to the one before. */
  i: number[];
  /** 5-hour utilisation in ten-thousandths, -1 when unknown or not sampled. */
  s: number[];
  /** Weekly utilisation in ten-thousandths, -1 when unknown or not sampled. */
  w: number[];
  /** Flags: 1 cooling, 2 reset, 4 sampled. */
  f: number[];
  /** Requests served. */
  r: number[];
  /** Input, output, cache-read, cache-creation tokens: four per entry. */
  k: number[];
}

/** What `usage-history.json` holds. */
export interface SavedUsageHistory {
  version: 1;
  savedAtMs: number;
  accounts: Record<string, { lastSession: number | null; fine: SavedTier; minute: SavedTier }>;
}

export class UsageHistory {
  private readonly accounts = new Map<string, AccountHistory>();

  private account(label: string): AccountHistory {
    let h = this.accounts.get(label);
    if (!h) {
      const ring = (t: Tier) => new Ring(HISTORY_TIERS[t].stepMs, HISTORY_TIERS[t].slots);
      h = { rings: { fine: ring('fine'), minute: ring('minute') }, lastSession: null };
      this.accounts.set(label, h);
    }
    return h;
  }

  /** Records `label`'s utilisation at `nowMs` (epoch ms); a drop of the 5-hour window by 5 points or more is a reset. */
  sample(label: string, s: UsageSample, nowMs: number): void {
    const h = this.account(label);
    const reset = s.session !== null && h.lastSession !== null && h.lastSession - s.session >= RESET_DROP;
    h.rings.fine.sample(nowMs, s, reset);
    h.rings.minute.sample(nowMs, s, reset);
    if (s.session !== null) h.lastSession = s.session;
  }

  /** Counts one request `label` served at `nowMs` (epoch ms), with its tokens (null: not reported). */
  count(label: string, tokens: TokenCounts | null, nowMs: number): void {
    const h = this.account(label);
    h.rings.fine.count(nowMs, tokens);
    h.rings.minute.count(nowMs, tokens);
  }

  /** Forgets every account not in `labels` (removed or renamed accounts free their buffers). */
  keepOnly(labels: ReadonlySet<string>): void {
    for (const label of [...this.accounts.keys()]) if (!labels.has(label)) this.accounts.delete(label);
  }

  /** Forgets `label`. */
  forget(label: string): void {
    this.accounts.delete(label);
  }

  /** The labels with a history. */
  labels(): string[] {
    return [...this.accounts.keys()];
  }

  /** Each known account's points over `range` up to `nowMs`, in the order they were first seen. */
  series(range: HistoryRange, nowMs: number): UsageSeries[] {
    const v = RANGE_VIEW[range];
    const stepMs = HISTORY_TIERS[v.tier].stepMs * v.per;
    return [...this.accounts].map(([label, h]) => ({ label, range, stepMs, fromMs: nowMs - v.spanMs, toMs: nowMs, points: h.rings[v.tier].read(nowMs, v.per, v.spanMs) }));
  }

  /** The saved shape at `nowMs`: only the slots still within their tier's span. */
  toSaved(nowMs: number): SavedUsageHistory {
    const accounts: SavedUsageHistory['accounts'] = {};
    for (const [label, h] of this.accounts) accounts[label] = { lastSession: h.lastSession, fine: saveRing(h.rings.fine, nowMs), minute: saveRing(h.rings.minute, nowMs) };
    return { version: 1, savedAtMs: nowMs, accounts };
  }

  /**
   * Loads a saved history: an interval this history does not hold is taken from it, one it holds
   * stays as it is (so loading into a fresh history restores it, and loading another router's file
   * into a running one adds what that one saw). A malformed file or tier is skipped.
   * @returns false when `saved` is not a saved history
   */
  load(saved: unknown, nowMs: number): boolean {
    if (!isSavedHistory(saved)) return false;
    for (const [label, a] of Object.entries(saved.accounts)) {
      if (!a || typeof a !== 'object') continue;
      const had = this.accounts.has(label);
      const h = this.account(label);
      if (!had && typeof a.lastSession === 'number') h.lastSession = a.lastSession;
      loadRing(h.rings.fine, a.fine, nowMs);
      loadRing(h.rings.minute, a.minute, nowMs);
    }
    return true;
  }
}

function saveRing(r: Ring, nowMs: number): SavedTier {
  const live: number[] = [];
  for (let i = 0; i < r.slots; i++) if (r.stamp[i] >= 0 && r.live(i, nowMs)) live.push(i);
  live.sort((a, b) => r.stamp[a] - r.stamp[b]);
  const out: SavedTier = { i: [], s: [], w: [], f: [], r: [], k: [] };
  let prev = 0;
  const tenThousandths = (v: number) => (Number.isNaN(v) ? -1 : Math.round(v * 10_000));
  for (const i of live) {
    out.i.push(r.stamp[i] - prev);
    prev = r.stamp[i];
    out.s.push(tenThousandths(r.session[i]));
    out.w.push(tenThousandths(r.weekly[i]));
    out.f.push(r.flags[i]);
    out.r.push(r.requests[i]);
    for (let j = 0; j < TOKEN_KINDS; j++) out.k.push(r.tokens[i * TOKEN_KINDS + j]);
  }
  return out;
}

function loadRing(r: Ring, t: SavedTier | undefined, nowMs: number): void {
  if (
    !t ||
    !Array.isArray(t.i) ||
    ![t.s, t.w, t.f, t.r].every((a) => Array.isArray(a) && a.length === t.i.length) ||
    !Array.isArray(t.k) ||
    t.k.length !== t.i.length * TOKEN_KINDS
  )
    return;
  const last = Math.floor(nowMs / r.stepMs);
  let interval = 0;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  for (let n = 0; n < t.i.length; n++) {
    interval += num(t.i[n]);
    if (interval <= last - r.slots || interval > last) continue;
    const i = interval % r.slots;
    if (r.stamp[i] === interval) continue; // this history's own record of the interval stays
    r.stamp[i] = interval;
    const s = num(t.s[n]);
    const w = num(t.w[n]);
    r.session[i] = s < 0 ? NaN : s / 10_000;
    r.weekly[i] = w < 0 ? NaN : w / 10_000;
    r.flags[i] = num(t.f[n]) & (COOLING | RESET | SAMPLED);
    r.requests[i] = Math.min(U32_MAX, Math.max(0, num(t.r[n])));
    for (let j = 0; j < TOKEN_KINDS; j++) r.tokens[i * TOKEN_KINDS + j] = Math.min(U32_MAX, Math.max(0, num(t.k[n * TOKEN_KINDS + j])));
  }
}

function isSavedHistory(v: unknown): v is SavedUsageHistory {
  const s = v as Partial<SavedUsageHistory> | null;
  return !!s && typeof s === 'object' && s.version === 1 && !!s.accounts && typeof s.accounts === 'object';
}
