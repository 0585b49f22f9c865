/**
 * What the endpoint handlers need from the fake upstream's server: its options, clock, token
 * registry, accounts, cancellable timers and the public fault/clock controls.
 */
import type { SimAccount } from '../account';
import type { TokenRegistry } from '../oauth';
import type { FakeUpstream, FakeUpstreamOptions, SimAccountState } from '../types';

export interface SimHost extends Pick<FakeUpstream, 'now' | 'advanceClock' | 'injectFault' | 'clearFaults' | 'setConcurrencyLimit'> {
  readonly opts: FakeUpstreamOptions;
  readonly tokens: TokenRegistry;
  /** Text deltas per streamed answer (at least 1). */
  readonly sseDeltaCount: number;
  /** Real-time pause between streamed events, ms (0: none). */
  readonly sseIntervalMs: number;
  /** The reply text of an account. */
  replyText(label: string): string;
  /** The next `msg_sim_…` id. */
  nextMessageId(): string;
  /** Real-time delay (ms) that closing the server cancels (resolves early). */
  sleep(ms: number): Promise<void>;
  /** @throws Error for an unknown label */
  acct(label: string): SimAccount;
  /** Every account's state without its tokens. */
  publicState(): { now: number; accounts: Array<Omit<SimAccountState, 'accessToken' | 'refreshToken'>> };
}
