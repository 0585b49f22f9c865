/**
 * Per-account utilisation over time, sampled from the `/status` reports a window already reads, for
 * the status panel's charts. Two ring buffers per account, so memory is fixed whatever the uptime:
 * the last hour at 10-second resolution (360 slots) and the last 24 hours at one-minute resolution
 * (1,440 slots); a slot keeps the last sample taken in its interval. 45 KB per account (typed
 * arrays, 25 bytes a slot, 1,800 slots), only for the accounts of the latest report. Not persisted: a
 * window starts with an empty history. Pure: the time is always an argument.
 */
import type { StatusReport } from './status';

/** A chart's time span: the last hour (10 s slots) or the last day (1 min slots). */
export type HistoryRange = 'hour' | 'day';

/** Slot width (ms) and slot count of each range. */
export const HISTORY_TIERS: Readonly<Record<HistoryRange, { stepMs: number; slots: number }>> = Object.freeze({
  hour: { stepMs: 10_000, slots: 360 },
  day: { stepMs: 60_000, slots: 1_440 },
});

/** A drop of the 5-hour utilisation by at least this fraction between two samples is drawn as a reset. */
const RESET_DROP = 0.05;

/** One sample as the panel draws it. */
export interface UsagePoint {
  /** Epoch ms of the sample. */
  t: number;
  /** 5-hour window used, fraction 0–1; null when unknown. */
  session: number | null;
  /** Weekly window used, fraction 0–1; null when unknown. */
  weekly: number | null;
  /** The router held the account in a cooldown at that moment. */
  cooling: boolean;
  /** The 5-hour utilisation dropped by at least {@link RESET_DROP} since the sample before (a window reset). */
  reset: boolean;
}

/** One account's samples over a range, oldest first. */
export interface UsageSeries {
  label: string;
  range: HistoryRange;
  /** Epoch ms of the range's start and end (the end is the `now` it was read at). */
  fromMs: number;
  toMs: number;
  points: UsagePoint[];
}

const COOLING = 1;
const RESET = 2;

/** One ring buffer: slot i holds the last sample of interval `stamp[i]` (interval = floor(t / stepMs)). */
class Ring {
  private readonly stamp: Float64Array;
  private readonly time: Float64Array;
  private readonly session: Float32Array;
  private readonly weekly: Float32Array;
  private readonly flags: Uint8Array;

  constructor(
    private readonly stepMs: number,
    private readonly slots: number,
  ) {
    this.stamp = new Float64Array(slots).fill(-1);
    this.time = new Float64Array(slots);
    this.session = new Float32Array(slots);
    this.weekly = new Float32Array(slots);
    this.flags = new Uint8Array(slots);
  }

  put(p: UsagePoint): void {
    const interval = Math.floor(p.t / this.stepMs);
    const i = interval % this.slots;
    // A reset seen earlier in the same interval stays marked.
    const keep = this.stamp[i] === interval ? this.flags[i] & RESET : 0;
    this.stamp[i] = interval;
    this.time[i] = p.t;
    this.session[i] = p.session ?? NaN;
    this.weekly[i] = p.weekly ?? NaN;
    this.flags[i] = keep | (p.cooling ? COOLING : 0) | (p.reset ? RESET : 0);
  }

  /** The samples of the last `slots` intervals up to `now`, oldest first. */
  read(now: number): UsagePoint[] {
    const last = Math.floor(now / this.stepMs);
    const out: UsagePoint[] = [];
    for (let interval = last - this.slots + 1; interval <= last; interval++) {
      const i = ((interval % this.slots) + this.slots) % this.slots;
      if (this.stamp[i] !== interval) continue;
      out.push({
        t: this.time[i],
        session: fraction(this.session[i]),
        weekly: fraction(this.weekly[i]),
        cooling: (this.flags[i] & COOLING) !== 0,
        reset: (this.flags[i] & RESET) !== 0,
      });
    }
    return out;
  }
}

/** A stored float32 back to the fraction it was (4 decimals), or null for NaN (unknown). */
function fraction(v: number): number | null {
  return Number.isNaN(v) ? null : Math.round(v * 10_000) / 10_000;
}

interface AccountHistory {
  rings: Record<HistoryRange, Ring>;
  lastSession: number | null;
}

export class UsageHistory {
  private readonly accounts = new Map<string, AccountHistory>();

  /**
   * Samples every account of `status` at `nowMs` (epoch ms). Accounts no longer in the report are
   * forgotten, so removed or renamed accounts free their buffers.
   */
  record(status: StatusReport, nowMs: number): void {
    const seen = new Set<string>();
    for (const a of status.accounts) {
      seen.add(a.label);
      let h = this.accounts.get(a.label);
      if (!h) {
        h = { rings: { hour: new Ring(HISTORY_TIERS.hour.stepMs, HISTORY_TIERS.hour.slots), day: new Ring(HISTORY_TIERS.day.stepMs, HISTORY_TIERS.day.slots) }, lastSession: null };
        this.accounts.set(a.label, h);
      }
      const session = a.session.used;
      const reset = session !== null && h.lastSession !== null && h.lastSession - session >= RESET_DROP;
      const point: UsagePoint = { t: nowMs, session, weekly: a.weekly.used, cooling: a.coolingUntil !== null, reset };
      h.rings.hour.put(point);
      h.rings.day.put(point);
      if (session !== null) h.lastSession = session;
    }
    for (const label of [...this.accounts.keys()]) if (!seen.has(label)) this.accounts.delete(label);
  }

  /** Each known account's samples over `range` up to `nowMs`, in the order they were first seen. */
  series(range: HistoryRange, nowMs: number): UsageSeries[] {
    const { stepMs, slots } = HISTORY_TIERS[range];
    return [...this.accounts].map(([label, h]) => ({ label, range, fromMs: nowMs - stepMs * slots, toMs: nowMs, points: h.rings[range].read(nowMs) }));
  }
}
