/** The names of the decision log's files: `decisions.jsonl` and the rotated `decisions-<UTC stamp>[-n].jsonl`. */

/** A rotated log's name: `decisions-<UTC stamp>.jsonl`, or `-<n>` after the stamp for later ones in the same second. */
export const ROTATED = /^decisions-(\d{8}T\d{6})(?:-(\d+))?\.jsonl$/;

/**
 * Orders decision-log file names oldest first: rotated files by stamp, then by their `-<n>`
 * suffix (a plain name sort would put `-1` before the suffix-less file of the same second),
 * and the current `decisions.jsonl` last.
 */
export function byRotationOrder(a: string, b: string): number {
  const key = (f: string): [string, number] => {
    const m = ROTATED.exec(f);
    return m ? [m[1], Number(m[2] ?? 0)] : ['~', 0];
  };
  const [sa, na] = key(a);
  const [sb, nb] = key(b);
  return sa < sb ? -1 : sa > sb ? 1 : na - nb;
}
