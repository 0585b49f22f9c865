/**
 * Deterministic randomness for the draw-based strategies: a 32-bit FNV-1a hash of a string and a
 * mulberry32 generator seeded with it. The seed comes from the request id, so `replay` (or a test)
 * that plans the same request again draws the same numbers. Pure: no Math.random.
 */

/** FNV-1a over the UTF-16 code units of `s`, as an unsigned 32-bit integer. */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A generator of numbers in (0, 1) from a 32-bit seed (mulberry32; never exactly 0, so log() is finite). */
export function seededRandom(seed: number): () => number {
  let t = seed >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return (((r ^ (r >>> 14)) >>> 0) + 0.5) / 4_294_967_296;
  };
}
