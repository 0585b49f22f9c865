/**
 * Quota evidence: parsing (headers, usage endpoint), merging, response classification and
 * cooldown rules. Everything here is pure — no I/O, no clock, no module state.
 * See docs/anthropic-api.md#rate-limit-evidence and docs/routing.md.
 */
export * from './types';
export * from './constants';
export * from './number';
export * from './time';
export * from './status';
export * from './family';
export * from './headers';
export * from './usage';
export * from './merge';
export * from './classify';
export * from './cooldown';
