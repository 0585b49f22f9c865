/**
 * Quota evidence: parsing (headers, usage endpoint), merging, response classification and
 * cooldown rules. Everything here is pure — no I/O, no clock, no module state.
 * See ../shared/reference/anthropic-wire.md §3 and routing-semantics.md.
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
