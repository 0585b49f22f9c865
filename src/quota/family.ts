/**
 * Model family names, the key of model-scoped windows (`7d_sonnet-*` headers,
 * `seven_day_sonnet` usage fields, `limits[].scope.model.display_name`): docs/anthropic-api.md#rate-limit-evidence.
 */

/** A family key as stored in `QuotaSnapshot.scoped`: lower case, starts with a letter or digit. */
const FAMILY = /^[a-z0-9][a-z0-9_.-]*$/;

/** True when `family` is a usable scoped-window key (lower-case, no leading `_`, so never `__proto__`). */
export function isFamilyKey(family: string): boolean {
  return FAMILY.test(family);
}

/** The model families Anthropic's models are named by (`claude-<family>-…`, `Claude <Family> …`). */
const MODEL_FAMILIES: ReadonlySet<string> = new Set(['opus', 'sonnet', 'haiku']);

/**
 * True when a scoped-window key (`7d_<key>`, `seven_day_<key>`) names a model family. Some do not:
 * `7d_oi` is kept under `oi`, which no model id carries, so the window's models are learned from
 * the request it refused (src/quota/classify.ts).
 */
export function namesModelFamily(key: string): boolean {
  return MODEL_FAMILIES.has(key);
}

/**
 * The family of a model id or display name, lower case, or undefined.
 *
 * Takes the first word that is neither `claude` nor a version/date number:
 * `claude-sonnet-4-5-20250929` → `sonnet`, `claude-3-5-sonnet-20241022` → `sonnet`,
 * `Claude Opus 4.1` → `opus`, `Sonnet` → `sonnet`, `claude-haiku-4-5[1m]` → `haiku`.
 */
export function modelFamily(model: string | undefined): string | undefined {
  if (typeof model !== 'string') return undefined;
  // A request asks for its family several times (plan, record, performance): a handful of model ids repeat.
  const known = FAMILY_OF.get(model);
  if (known !== undefined || FAMILY_OF.has(model)) return known;
  if (FAMILY_OF.size >= MAX_REMEMBERED_MODELS) FAMILY_OF.clear();
  const family = familyOf(model);
  FAMILY_OF.set(model, family);
  return family;
}

/** Model ids remembered with their family (a client uses a few; a flood of made-up ids only empties the table). */
const MAX_REMEMBERED_MODELS = 256;
const FAMILY_OF = new Map<string, string | undefined>();

function familyOf(model: string): string | undefined {
  for (const word of model.toLowerCase().split(/[^a-z0-9]+/)) {
    if (word === '' || word === 'claude' || /^\d/.test(word)) continue;
    return word;
  }
  return undefined;
}
