/** Per-account colours that stay the same in every chart and lane, and the viewer's local clock. */

/** The theme's chart colours, in order (media/panel.css maps `acct-N` to them). */
const COLOURS = 6;

/** The colour class of `label`: its place in the pool's order, modulo the theme's chart colours. */
export function accountClass(palette: readonly string[], label: string | null): string {
  const i = label === null ? -1 : palette.indexOf(label);
  return i < 0 ? 'acct-none' : `acct-${i % COLOURS}`;
}

/** Epoch ms as the viewer's local wall-clock time, `14:02:09`. */
export function clock(ms: number): string {
  return new Date(ms).toLocaleTimeString(undefined, { hour12: false });
}
