/**
 * Fake Anthropic upstream for tests, the demo, soak tests and benchmarks.
 * Imports nothing from the rest of src/.
 */
export { startFakeUpstream } from './fakeUpstream';
export { OAUTH_BETA, EXPIRED_TOKEN_MESSAGE } from './endpoints/request';
export { RATE_LIMIT_MESSAGE, ENTITLEMENT_MESSAGE } from './endpoints/messages';
export type { FakeUpstream, FakeUpstreamOptions, SimAccountSpec, SimAccountState, SimFault, SimRequestRecord, SimScopedWindowState, SimUsage } from './types';
export { FIVE_HOUR_MS, SEVEN_DAY_MS, WARNING_FRACTION, windowStatus, modelFamily } from './windows';
export type { WindowStatus } from './windows';
export { FAULT_KINDS, validateFault } from './faults';
export { SIM_MODELS } from './models';
export { DEFAULT_ACCESS_TOKEN_TTL_MS } from './oauth';
export { DEFAULT_FIVE_HOUR_LIMIT_TOKENS, DEFAULT_SEVEN_DAY_LIMIT_TOKENS } from './windows';
export { DEMO_ACCOUNTS, simAccounts } from './presets';
export { runSampleTraffic } from './sampleTraffic';
export type { SampleTrafficOptions, SampleTrafficResult } from './sampleTraffic';
