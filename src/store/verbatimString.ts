/**
 * Stands in for ioredis's `resp/verbatim-string` module in the bundles (esbuild.mjs). ioredis 6
 * declares `class VerbatimString extends String`, and in V8 (Node 20) a subclass of `String` leaves
 * `String.prototype` in dictionary mode for the life of the process: every string method call in
 * optimised code then takes the generic lookup (docs/performance.md, "Loading the Redis client") —
 * for a router with a shared store, and for every extension in the extension host.
 *
 * ioredis uses the class only as a marker: its RESP decoder builds one only for a reply type mapped
 * to it, and ioredis maps RESP3 verbatim strings to `Buffer` (`built/DataHandler.js`), so none is
 * built. This class keeps the marker, the constructor and the string value, without the subclass.
 */
export class VerbatimString {
  /** @param format the verbatim string's three-letter format (`txt`, `mkd`) */
  constructor(
    readonly format: string,
    private readonly value: string,
  ) {}

  toString(): string {
    return this.value;
  }

  valueOf(): string {
    return this.value;
  }
}
