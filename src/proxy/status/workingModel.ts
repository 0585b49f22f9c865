/**
 * The model the user's Claude Code works with, read from the recent decisions, so the views' "a new
 * request would go here" is worked out for it: with a model-scoped weekly limit, a model-less
 * preview can mark an account the user's next request will not use. Pure.
 */
import { modelFamily } from '../../quota/family';
import type { DecisionRecord } from '../../routing/decision';

/** Claude Code's small background requests (titles, summaries) go to its small fast model, a Haiku: not the working model. */
const BACKGROUND_FAMILY = 'haiku';

/**
 * The model of the latest `/v1/messages` decision whose family is not {@link BACKGROUND_FAMILY},
 * else of the latest with a model; null when no decision names one.
 * @param decisions recent decision records, oldest first
 */
export function workingModel(decisions: readonly DecisionRecord[]): string | null {
  let fallback: string | null = null;
  for (let i = decisions.length - 1; i >= 0; i--) {
    const { path, model } = decisions[i];
    if (path !== '/v1/messages' || !model) continue;
    if (modelFamily(model) !== BACKGROUND_FAMILY) return model;
    fallback ??= model;
  }
  return fallback;
}
