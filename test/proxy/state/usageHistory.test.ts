/**
 * The usage history behind the panel's charts, kept by the router: each account's 5-hour and weekly
 * utilisation, and the requests it served with their tokens, in fixed-size ring buffers (the last
 * hour every 10 s, the last 7 days every minute), saved and restored.
 */
import { strict as assert } from 'node:assert';
import { HISTORY_BOUND, HISTORY_TIERS, UsageHistory, type UsageSample } from '../../../src/proxy/state/usageHistory';

const T0 = Date.UTC(2025, 10, 4, 12, 0, 0);
const at = (s: number | null, w: number | null = 0.5, cooling = false): UsageSample => ({ session: s, weekly: w, cooling });
const tokens = (i: number, o: number, r = 0, c = 0) => ({ inputTokens: i, outputTokens: o, cacheReadTokens: r, cacheCreationTokens: c });

describe('usage history: the samples and counts behind the charts', () => {
  it('keeps the last sample of each 10 s interval over the hour, and draws the day in 5-minute points', () => {
    const h = new UsageHistory();
    h.sample('work', at(0.1, 0.2), T0);
    h.sample('work', at(0.15, 0.2), T0 + 4_000); // same 10 s interval: replaces
    h.sample('work', at(0.3, 0.25), T0 + 30_000);
    h.sample('work', at(0.35, 0.25), T0 + 70_000);
    const hour = h.series('hour', T0 + 70_000)[0];
    assert.deepEqual(
      hour.points.map((p) => [p.t - T0, p.session, p.weekly]),
      [
        [0, 0.15, 0.2],
        [30_000, 0.3, 0.25],
        [70_000, 0.35, 0.25],
      ],
    );
    assert.equal(hour.stepMs, 10_000);
    const day = h.series('day', T0 + 70_000)[0];
    assert.equal(day.stepMs, 300_000);
    assert.deepEqual(
      day.points.map((p) => [p.t - T0, p.session]),
      [[0, 0.35]],
      'one 5-minute point, its last sample',
    );
    assert.equal(hour.toMs - hour.fromMs, 3_600_000);
    assert.equal(day.toMs - day.fromMs, 86_400_000);
    assert.equal(h.series('week', T0)[0].toMs - h.series('week', T0)[0].fromMs, 7 * 86_400_000);
  });

  it('counts the requests an account served and their tokens per interval, summed over a point', () => {
    const h = new UsageHistory();
    h.count('work', tokens(100, 20, 5000, 300), T0 + 1_000);
    h.count('work', tokens(50, 10), T0 + 2_000);
    h.count('work', null, T0 + 61_000); // an answer without usage still counts as a request
    h.count('personal', tokens(7, 3), T0 + 61_000);
    const [work, personal] = h.series('hour', T0 + 61_000);
    assert.deepEqual(
      work.points.map((p) => [p.t - T0, p.requests, p.inputTokens, p.outputTokens, p.cacheReadTokens, p.cacheCreationTokens, p.session]),
      [
        [0, 2, 150, 30, 5000, 300, null],
        [60_000, 1, 0, 0, 0, 0, null],
      ],
    );
    assert.deepEqual(
      personal.points.map((p) => [p.requests, p.inputTokens + p.outputTokens]),
      [[1, 10]],
    );
    const week = h.series('week', T0 + 61_000)[0];
    assert.deepEqual(
      week.points.map((p) => [p.requests, p.inputTokens, p.outputTokens]),
      [[3, 150, 30]],
      'the week sums 30 minutes to a point',
    );
  });

  it('keeps 7 days at one-minute resolution and forgets what is older, so memory stays fixed', () => {
    const h = new UsageHistory();
    const { stepMs, slots } = HISTORY_TIERS.minute;
    assert.equal(slots, 7 * 1_440);
    const minutes = slots + 600;
    for (let i = 0; i < minutes; i++) h.count('work', tokens(1, 1), T0 + i * stepMs);
    const now = T0 + (minutes - 1) * stepMs;
    const week = h.series('week', now)[0].points;
    assert.equal(
      week.reduce((n, p) => n + p.requests, 0),
      slots,
      'exactly the last 7 days of minutes',
    );
    assert.ok(week[0].t >= now - 7 * 86_400_000 - 30 * stepMs);
    // An hour later with nothing recorded, the hour's chart is empty.
    assert.equal(h.series('hour', now + 3_600_000)[0].points.length, 0);
  });

  it('marks cooldowns and 5-hour resets, and keeps unknown values unknown', () => {
    const h = new UsageHistory();
    h.sample('a', at(0.9), T0);
    h.sample('a', at(0.95, 0.5, true), T0 + 60_000);
    h.sample('a', at(0.02), T0 + 120_000);
    h.sample('a', at(null, null), T0 + 180_000);
    const pts = h.series('hour', T0 + 180_000)[0].points;
    assert.deepEqual(
      pts.map((p) => [p.session, p.cooling, p.reset]),
      [
        [0.9, false, false],
        [0.95, true, false],
        [0.02, false, true],
        [null, false, false],
      ],
    );
  });

  it('drops the history of an account that left the pool', () => {
    const h = new UsageHistory();
    h.sample('a', at(0.1), T0);
    h.sample('b', at(0.2), T0);
    h.keepOnly(new Set(['b']));
    assert.deepEqual(
      h.series('day', T0 + 60_000).map((s) => s.label),
      ['b'],
    );
  });

  it('survives a restart: the saved history restores every point, and loading adds only the intervals missing', () => {
    const h = new UsageHistory();
    h.sample('work', at(0.4, 0.6, true), T0);
    h.count('work', tokens(10, 20, 30, 40), T0 + 5_000);
    h.sample('work', at(0.1, 0.6), T0 + 3 * 86_400_000); // three days later: a reset
    const now = T0 + 3 * 86_400_000 + 1_000;
    const saved = JSON.parse(JSON.stringify(h.toSaved(now)));
    const restored = new UsageHistory();
    assert.equal(restored.load(saved, now), true);
    for (const range of ['hour', 'day', 'week'] as const) assert.deepEqual(restored.series(range, now), h.series(range, now), range);
    // A running history keeps its own record of an interval; it adds the file's others.
    const running = new UsageHistory();
    running.count('work', null, T0 + 1_000);
    running.load(saved, now);
    const week = running.series('week', now)[0].points;
    assert.deepEqual(
      week.map((p) => [p.requests, p.inputTokens, p.session]),
      [
        [1, 0, null],
        [0, 0, 0.1],
      ],
    );
    assert.equal(new UsageHistory().load({ version: 2 }, now), false, 'an unknown shape restores nothing');
    assert.equal(new UsageHistory().load(null, now), false);
  });

  it('saves at most the documented bytes per account, with every slot busy', () => {
    const h = new UsageHistory();
    const { minute, fine } = HISTORY_TIERS;
    const end = T0 + minute.slots * minute.stepMs;
    // Every minute of the week and every 10 s of the last hour: a sample and busy numbers at their longest.
    for (let t = end - minute.slots * minute.stepMs; t < end; t += minute.stepMs) {
      h.sample('busy-account', at(0.9876, 0.9876, true), t);
      h.count('busy-account', tokens(99_999_999, 99_999_999, 99_999_999, 99_999_999), t);
    }
    for (let t = end - fine.slots * fine.stepMs; t < end; t += fine.stepMs) {
      h.sample('busy-account', at(0.9876, 0.9876, true), t);
      h.count('busy-account', tokens(99_999_999, 99_999_999, 99_999_999, 99_999_999), t);
    }
    const bytes = Buffer.byteLength(JSON.stringify(h.toSaved(end - 1)));
    assert.ok(bytes <= HISTORY_BOUND.diskBytesPerAccount, `${bytes} bytes saved for one account`);
    assert.ok(bytes >= HISTORY_BOUND.diskBytesPerAccount * 0.5, `the bound is not loose: ${bytes} bytes`);
    assert.equal(HISTORY_BOUND.slotsPerAccount, 10_440);
  });
});
