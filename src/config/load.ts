/**
 * `proxy-config.yaml` → validated configuration. Never throws on bad input:
 * returns an error that names the key (as the user spells it) and the reason.
 */
import { readFile } from 'node:fs/promises';
import { isScalar, parseDocument, visit, type Document } from 'yaml';
import type { z } from 'zod';
import { configSchema, type ConfigInput } from './schema';
import { camelToKebab, displayKey, DuplicateKeyError, normalizeKeys } from './keys';

export type LoadResult = { ok: true; config: ConfigInput } | { ok: false; error: string };

/** Zod issues → one line per issue: `routing.spill-inflight: Too big: expected number to be <=100` (VS Code settings use camelCase keys). */
export function formatIssues(issues: readonly z.core.$ZodIssue[], prefix = '', keyStyle: 'kebab' | 'camel' = 'kebab'): string {
  // An unknown key is shown only when it looks like a setting name (displayKey): it may be a token.
  const name = keyStyle === 'kebab' ? displayKey : (k: string) => (displayKey(k) === camelToKebab(k) ? k : displayKey(k));
  return issues
    .map((i) => {
      const path = i.path.map((p) => (typeof p === 'string' ? name(p) : String(p)));
      const where = [prefix, ...path].filter(Boolean).join('.') || '(top level)';
      // zod quotes the camelCase form it saw; name the keys as the user writes them.
      if (i.code === 'unrecognized_keys') return `${where}: unknown key${i.keys.length > 1 ? 's' : ''} ${i.keys.map(name).join(', ')}`;
      return `${where}: ${i.message}`;
    })
    .join('\n');
}

/** Validates already-parsed configuration data (YAML or JSON). */
export function validateConfig(data: unknown): LoadResult {
  if (data === null || data === undefined) data = {};
  let normalized: unknown;
  try {
    normalized = normalizeKeys(data);
  } catch (err) {
    if (err instanceof DuplicateKeyError) return { ok: false, error: err.message };
    throw err;
  }
  const parsed = configSchema.safeParse(normalized);
  if (!parsed.success) return { ok: false, error: formatIssues(parsed.error.issues) };
  return { ok: true, config: parsed.data };
}

/**
 * A mapping key that is not a plain scalar (a collection or an alias), as an error message, or
 * undefined. Configuration keys are always plain words, and `toJS` would stringify a collection key
 * — in time and memory that grow so fast with nesting that a 1 KB file can exhaust the process.
 */
function complexKey(doc: Document, text: string): string | undefined {
  let found: string | undefined;
  visit(doc, {
    Pair(_, pair) {
      if (pair.key === null || pair.key === undefined || isScalar(pair.key)) return undefined;
      const offset = (pair.key as { range?: [number, number, number] }).range?.[0] ?? 0;
      const line = text.slice(0, offset).split('\n').length;
      found = `mapping keys must be plain names, not collections or aliases (line ${line})`;
      return visit.BREAK;
    },
  });
  return found;
}

/** How a config file is read. */
export interface LoadOptions {
  /**
   * Refuse a file with no settings at all (empty, or comments only). A reload does: an editor or
   * script that truncates the file before writing it would otherwise drop every account for a
   * moment. An intentionally empty config is written `{}`.
   */
  refuseEmpty?: boolean;
}

/** Parses and validates YAML text. Never throws: YAML the library cannot turn into data is an error result. */
export function parseConfigText(text: string, opts: LoadOptions = {}): LoadResult {
  let data: unknown;
  try {
    const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
    if (doc.errors.length > 0) return { ok: false, error: yamlErrorText(doc.errors[0], text) };
    const badKey = complexKey(doc, text);
    if (badKey) return { ok: false, error: `YAML: ${badKey}` };
    // toJS throws on an unresolved alias (`*a` without `&a`) and on an alias bomb.
    data = doc.toJS();
    if (opts.refuseEmpty && (data === null || data === undefined)) {
      return { ok: false, error: 'the file holds no settings (empty, or comments only); for a config of defaults write {}' };
    }
  } catch (err) {
    // The library's messages can quote the source (and a token on that line): name the kind only.
    const kind = err instanceof Error && /alias/i.test(err.message) ? 'an alias that cannot be resolved, or too many aliases' : 'data that cannot be read';
    return { ok: false, error: `YAML: ${kind}` };
  }
  return validateConfig(data);
}

/**
 * A YAML syntax error as line and column only. The library's own message
 * quotes the offending source line, which may hold a token.
 */
function yamlErrorText(err: { code: string; pos: [number, number] }, text: string): string {
  const upTo = text.slice(0, err.pos[0]);
  const line = upTo.split('\n').length;
  const column = err.pos[0] - upTo.lastIndexOf('\n');
  return `YAML syntax error at line ${line}, column ${column} (${err.code.toLowerCase().replace(/_/g, ' ')})`;
}

/** Reads and validates a config file. A missing or unreadable file is an error result. */
export async function loadConfigFile(file: string, opts: LoadOptions = {}): Promise<LoadResult> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    return { ok: false, error: `${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
  const result = parseConfigText(text, opts);
  return result.ok ? result : { ok: false, error: `${file}: ${result.error}` };
}
