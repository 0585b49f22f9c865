/**
 * The model list `GET /v1/models` returns.
 */

/** One entry of the models list. */
export interface SimModel {
  type: 'model';
  id: string;
  display_name: string;
  /** ISO-8601. */
  created_at: string;
}

/** Models the sim advertises, newest first (like the real list). */
export const SIM_MODELS: readonly SimModel[] = [
  { type: 'model', id: 'claude-opus-4-5-20251101', display_name: 'Claude Opus 4.5', created_at: '2025-11-01T00:00:00Z' },
  { type: 'model', id: 'claude-haiku-4-5-20251001', display_name: 'Claude Haiku 4.5', created_at: '2025-10-01T00:00:00Z' },
  { type: 'model', id: 'claude-sonnet-4-5-20250929', display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z' },
  { type: 'model', id: 'claude-opus-4-1-20250805', display_name: 'Claude Opus 4.1', created_at: '2025-08-05T00:00:00Z' },
  { type: 'model', id: 'claude-sonnet-4-20250514', display_name: 'Claude Sonnet 4', created_at: '2025-05-14T00:00:00Z' },
];

/** Body of `GET /v1/models`. */
export function modelsListBody(): { data: SimModel[]; has_more: false; first_id: string; last_id: string } {
  const data = SIM_MODELS.map((m) => ({ ...m }));
  return { data, has_more: false, first_id: data[0].id, last_id: data[data.length - 1].id };
}
