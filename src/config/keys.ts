/**
 * Kebab-case ↔ camelCase for configuration keys. YAML users write
 * `spill-inflight`, code and VS Code settings use `spillInflight`; both are
 * accepted, and errors quote the key in kebab-case.
 */

/** `spill-inflight` → `spillInflight`. */
export function kebabToCamel(key: string): string {
  return key.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** `spillInflight` → `spill-inflight`; a number after a word starts a word (`stickyThreshold5h` → `sticky-threshold-5h`). */
export function camelToKebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`).replace(/([A-Za-z_])(\d)/g, '$1-$2');
}

/**
 * What a configuration key can look like when it is shown: words of letters (or `_`) joined by
 * `-`, where a later word may also be a number with one unit letter (`5h`, `7d`), 40 characters at
 * most; or a list index.
 */
const SHOWN_KEY = /^(?:[A-Za-z_]+(?:-(?:[A-Za-z_]+|\d{1,3}[a-z]?))*|\d{1,6})$/;

/**
 * A key as an error message names it: in kebab-case when it looks like a setting name, else by
 * its length only. A key that is no name may be a secret pasted in the wrong place (a token
 * written as a key), and an error message must not repeat it, even rearranged.
 */
export function displayKey(key: string): string {
  const kebab = camelToKebab(key);
  return kebab.length <= 40 && SHOWN_KEY.test(kebab) ? kebab : `(a key of ${key.length} characters, not shown: it is no setting name and may be a secret)`;
}

/** A key given twice (kebab and camel). */
export class DuplicateKeyError extends Error {}

/**
 * Recursively renames object keys to camelCase. Values under `label`-like
 * string fields are untouched (only keys change).
 * @throws DuplicateKeyError when one object holds both spellings of a key
 */
export function normalizeKeys(value: unknown, path: string[] = []): unknown {
  if (Array.isArray(value)) return value.map((v, i) => normalizeKeys(v, [...path, String(i)]));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const camel = kebabToCamel(k);
    if (Object.prototype.hasOwnProperty.call(out, camel)) {
      throw new DuplicateKeyError(`${[...path, camel].map(displayKey).join('.')}: given twice (kebab-case and camelCase)`);
    }
    // defineProperty, not assignment: a `__proto__` key must stay an own (and so unknown) key
    // instead of replacing the prototype, where the schema would read its contents as real keys.
    Object.defineProperty(out, camel, { value: normalizeKeys(v, [...path, camel]), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
