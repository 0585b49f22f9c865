/**
 * Reading decision records of either schema version. Version 2 records are taken as they are;
 * a version 1 record (it carried the raw `sessionId`) is upgraded on read: its id is hashed
 * into `stickyKeyHash` and the raw id dropped, so `report`, `replay` and the views work on
 * the hash whatever the log's age. Pure.
 */
import type { DecisionRecord } from './decision';
import { stickyKeyHash } from './identify';

/** A version 1 record: the version 2 shape with `sessionId` where the three sticky fields are. */
type RecordV1 = Omit<DecisionRecord, 'schemaVersion' | 'stickyKeySource' | 'stickyKind' | 'stickyKeyHash'> & { schemaVersion: 1; sessionId?: unknown };

/**
 * A parsed JSON value → a version 2 decision record, or null when it is not a decision record
 * (no known `schemaVersion`, no `ts`). A version 1 id becomes source `unknown` (the header
 * or `metadata.user_id`: version 1 did not say which), kind `session`.
 */
export function readDecisionRecord(value: unknown): DecisionRecord | null {
  if (!value || typeof value !== 'object') return null;
  const r = value as { schemaVersion?: unknown; ts?: unknown };
  if (typeof r.ts !== 'string') return null;
  if (r.schemaVersion === 2) return value as DecisionRecord;
  if (r.schemaVersion !== 1) return null;
  const { sessionId, schemaVersion: _v1, ts, requestId, ...rest } = value as RecordV1;
  const id = typeof sessionId === 'string' && sessionId !== '' ? sessionId : null;
  return {
    schemaVersion: 2,
    ts,
    requestId,
    stickyKeySource: id === null ? 'none' : 'unknown',
    stickyKind: id === null ? 'none' : 'session',
    stickyKeyHash: id === null ? null : stickyKeyHash(id),
    ...rest,
  };
}
