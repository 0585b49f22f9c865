/**
 * The one way durations are written for people (the CLI, the no-usable-account answer, the
 * status views). Pure.
 */

/**
 * A duration in SECONDS → `42 s`, `5 min`, `1 h 2 min`, `47 h`, `2 d 5 h`; `-` when not finite.
 *
 * Each unit is truncated, never rounded up, so a countdown only ever steps down and never
 * shows more than is left (`2 d` is 48 h to 48 h 59 min, a minute later `47 h 59 min`).
 * Below a minute: seconds; below an hour: minutes; below two days: hours and minutes;
 * from two days on: days and hours. A zero minor unit is left out; a negative value reads 0.
 */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '-';
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`;
  const d = Math.floor(h / 24);
  return h % 24 === 0 ? `${d} d` : `${d} d ${h % 24} h`;
}
