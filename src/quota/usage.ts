/**
 * OAuth usage endpoint body → QuotaSnapshot.
 *
 * Source: docs/anthropic-api.md#usage-endpoint. `GET /api/oauth/usage` answers with one object
 * per window — `five_hour`, `seven_day` and `seven_day_<family>` (e.g. `seven_day_sonnet`,
 * `seven_day_opus`), each possibly null — shaped `{utilization: PERCENT 0–100, resets_at:
 * ISO-8601 | null}`, plus `extra_usage {is_enabled, ...}`. More recent answers also have a
 * `limits[]` array of
 * `{kind: session | weekly_all | weekly_scoped, percent, resets_at, scope: {model: {display_name}}}`.
 * The units are not those of the headers: PERCENT (converted here to FRACTIONS by dividing by 100 —
 * never guessed from the value) and ISO resets (converted to epoch ms). Pure.
 */
import { USAGE_REJECTED_FRACTION, USAGE_WARNING_FRACTION } from './constants';
import { isFamilyKey, modelFamily } from './family';
import { parseDecimal } from './number';
import { parseResetMs } from './time';
import type { OverageInfo, QuotaSnapshot, QuotaWindow, ScopedQuotaWindow } from './types';

/** `seven_day_<family>` keys that are not model families (e.g. `seven_day_oauth_apps`). */
const NOT_A_FAMILY = new Set(['oauth_apps']);

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The status the usage endpoint implies for a utilisation FRACTION (it reports none itself):
 * ≥ 1.0 → `rejected`, ≥ 0.8 → `allowed_warning`, else `allowed`.
 */
export function statusFromUtilization(fraction: number): string {
  if (fraction >= USAGE_REJECTED_FRACTION) return 'rejected';
  if (fraction >= USAGE_WARNING_FRACTION) return 'allowed_warning';
  return 'allowed';
}

/** A PERCENT (number or numeric string, ≥ 0) → FRACTION; anything else → undefined. */
function percentToFraction(v: unknown): number | undefined {
  const n = parseDecimal(v);
  return n === undefined || n < 0 ? undefined : n / 100;
}

/** Builds a window from a percent and a reset; undefined when neither parses. */
function makeWindow(percent: unknown, resetsAt: unknown): QuotaWindow | undefined {
  const utilization = percentToFraction(percent);
  const resetAtMs = parseResetMs(resetsAt);
  const w: QuotaWindow = {};
  if (utilization !== undefined) {
    w.status = statusFromUtilization(utilization);
    w.utilization = utilization;
  }
  if (resetAtMs !== undefined) w.resetAtMs = resetAtMs;
  return Object.keys(w).length > 0 ? w : undefined;
}

/** `{utilization, resets_at}` → window; null, non-objects and empty objects → undefined. */
function legacyWindow(v: unknown): QuotaWindow | undefined {
  return isRecord(v) ? makeWindow(v['utilization'], v['resets_at']) : undefined;
}

/** The overage block from `extra_usage`: disabled → `rejected`; enabled → `allowed` unless its utilisation (PERCENT) is ≥ 100. */
function extraUsage(v: unknown): OverageInfo | undefined {
  if (!isRecord(v) || typeof v['is_enabled'] !== 'boolean') return undefined;
  const utilization = percentToFraction(v['utilization']);
  const o: OverageInfo = {
    status: v['is_enabled'] && (utilization === undefined || utilization < USAGE_REJECTED_FRACTION) ? 'allowed' : 'rejected',
  };
  if (utilization !== undefined) o.utilization = utilization;
  return o;
}

/**
 * Parses an `/api/oauth/usage` response body (already JSON-decoded).
 *
 * @param json the decoded body; anything is accepted.
 * @param observedAtMs when the body was received, epoch ms.
 * @returns a snapshot with `source: 'usage'` (utilisations as FRACTIONS, resets in epoch ms,
 *   window statuses derived by {@link statusFromUtilization}, no unified fields), or undefined
 *   when `json` is not a plain object. Fields that do not parse are left out; an object with no
 *   recognised field yields a snapshot with no windows. The named fields (`five_hour`, `seven_day`,
 *   `seven_day_<family>`) win; `limits[]` entries fill only the windows they did not give.
 *   `limits[]` scoped entries take their family from `scope.model.display_name`
 *   (`"Claude Sonnet 4.5"` → `sonnet`). Never throws.
 */
export function parseUsagePayload(json: unknown, observedAtMs: number): QuotaSnapshot | undefined {
  if (!isRecord(json)) return undefined;
  const snap: QuotaSnapshot = { observedAtMs, source: 'usage', scoped: {} };
  const scoped = new Map<string, ScopedQuotaWindow>();

  const session = legacyWindow(json['five_hour']);
  if (session) snap.session = session;
  const weekly = legacyWindow(json['seven_day']);
  if (weekly) snap.weekly = weekly;
  for (const [key, value] of Object.entries(json)) {
    const m = /^seven_day_(.+)$/.exec(key.toLowerCase());
    if (!m || NOT_A_FAMILY.has(m[1]) || !isFamilyKey(m[1])) continue;
    const w = legacyWindow(value);
    if (w && !scoped.has(m[1])) scoped.set(m[1], { ...w, observedAtMs });
  }

  const limits = json['limits'];
  if (Array.isArray(limits)) {
    for (const entry of limits) {
      if (!isRecord(entry)) continue;
      const w = makeWindow(entry['percent'], entry['resets_at']);
      if (!w) continue;
      const kind = entry['kind'];
      if (kind === 'session') snap.session ??= w;
      else if (kind === 'weekly_all') snap.weekly ??= w;
      else if (kind === 'weekly_scoped') {
        const scope = entry['scope'];
        const model = isRecord(scope) ? scope['model'] : undefined;
        const name = isRecord(model) ? model['display_name'] : undefined;
        const family = typeof name === 'string' ? modelFamily(name) : undefined;
        if (family && isFamilyKey(family) && !scoped.has(family)) scoped.set(family, { ...w, observedAtMs });
      }
    }
  }

  const overage = extraUsage(json['extra_usage']);
  if (overage) snap.overage = overage;
  snap.scoped = Object.fromEntries(scoped);
  return snap;
}
