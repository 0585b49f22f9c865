/**
 * `proxy-config.yaml` → validated configuration. Never throws on bad input:
 * returns an error that names the key (as the user spells it) and the reason.
 */
import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { configSchema, type ConfigInput } from './schema';
import { camelToKebab, DuplicateKeyError, normalizeKeys } from './keys';

export type LoadResult = { ok: true; config: ConfigInput } | { ok: false; error: string };

/** Zod issues → one line per issue: `routing.spill-inflight: Too big: expected number to be <=100`. */
export function formatIssues(issues: readonly z.core.$ZodIssue[], prefix = ''): string {
  return issues
    .map((i) => {
      const path = i.path.map((p) => (typeof p === 'string' ? camelToKebab(p) : String(p)));
      const where = [prefix, ...path].filter(Boolean).join('.') || '(top level)';
      // zod quotes the camelCase form it saw; name the keys as the user writes them.
      if (i.code === 'unrecognized_keys') return `${where}: unknown key${i.keys.length > 1 ? 's' : ''} ${i.keys.map(camelToKebab).join(', ')}`;
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

/** Parses and validates YAML text. */
export function parseConfigText(text: string): LoadResult {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) return { ok: false, error: `YAML: ${doc.errors[0].message}` };
  return validateConfig(doc.toJS());
}

/** Reads and validates a config file. A missing or unreadable file is an error result. */
export async function loadConfigFile(file: string): Promise<LoadResult> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    return { ok: false, error: `${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
  const result = parseConfigText(text);
  return result.ok ? result : { ok: false, error: `${file}: ${result.error}` };
}
