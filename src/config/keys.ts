/**
 * Kebab-case ↔ camelCase for configuration keys. YAML users write
 * `spill-inflight`, code and VS Code settings use `spillInflight`; both are
 * accepted, and errors quote the key in kebab-case.
 */

/** `spill-inflight` → `spillInflight`. */
export function kebabToCamel(key: string): string {
  return key.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** `spillInflight` → `spill-inflight`. */
export function camelToKebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
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
      throw new DuplicateKeyError(`${[...path, camelToKebab(camel)].join('.')}: given twice (kebab-case and camelCase)`);
    }
    // defineProperty, not assignment: a `__proto__` key must stay an own (and so unknown) key
    // instead of replacing the prototype, where the schema would read its contents as real keys.
    Object.defineProperty(out, camel, { value: normalizeKeys(v, [...path, camel]), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
