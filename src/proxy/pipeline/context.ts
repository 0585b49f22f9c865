/**
 * What the request path works on: the router-wide services every step reads
 * (RouterServices, built once by the engine) and the one RequestContext each
 * request carries through the steps, filled in step by step.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { TokenManager } from '../../accounts/tokenManager';
import type { AttemptRecord, DecisionOutcome, UsageRecord, WaitRecord } from '../../routing/decision';
import type { MetricsParams } from '../../routing/metrics';
import { NO_STICKY_KEY } from '../../routing/identify';
import type { PlanAccount, RoutePlan } from '../../routing/plan';
import type { RequestClass } from '../../routing/requestClass';
import type { BodyBudget, RequestBody } from '../http/body';
import type { LiveStreams } from '../relay/streamRelay';
import type { ClientHead } from '../http/clientHead';
import type { RequestInfo } from '../http/requestInfo';
import type { Logger } from '../log';
import type { HeldAnswer } from '../relay/clientAnswer';
import type { ConfigGeneration, ConfigStatus } from '../runtimeConfig';
import type { AdmissionTicket } from '../state/concurrency';
import type { DecisionSink } from '../state/decisionLog';
import type { ProbeTicket } from '../state/probes';
import type { RouterState } from '../state/routerState';
import type { PacedRelease } from '../state/pacedRelease';
import type { SharedState } from '../state/sharedState';
import type { StoreStatus } from '../../store/connection';
import type { HeaderNotes } from '../state/headerNotes';
import type { RetryBudget } from '../state/retryBudget';
import type { WaitingRoom } from '../state/waitingRoom';
import type { ClientLink } from '../upstream/call';

/** The router-wide objects the steps use. */
export interface RouterServices {
  readonly state: RouterState;
  readonly tokens: TokenManager;
  readonly dispatcher: Dispatcher;
  readonly decisions: DecisionSink;
  readonly log: Logger;
  /** The clock, epoch ms. */
  readonly now: () => number;
  /** When the engine started, epoch ms. */
  readonly startedAtMs: number;
  readonly configStatus: ConfigStatus;
  /** The generation new requests take; a reload replaces it while running requests keep theirs. */
  live: ConfigGeneration;
  /** The local client key every request must carry. */
  clientKey: string;
  /** Policy failures already logged (each signature is logged once). */
  readonly loggedPolicyErrors: Set<string>;
  /** Open `/events` streams, ended when the router closes. */
  readonly changeStreams: Set<ServerResponse>;
  /** Answers being streamed now; the ones a closing router cannot wait for end with an error event (Engine.endStreams). */
  readonly streams: LiveStreams;
  /** The request bodies held at once, against `routing.max-buffered-body-bytes`. */
  readonly bodyBudget: BodyBudget;
  /** The requests held instead of answered, under `routing.max-waiting-requests`. */
  readonly waitingRoom: WaitingRoom;
  /** Releases the requests waiting for a cooling account one at a time once it recovers (pipeline/transientWait.ts). */
  readonly coolingRelease: PacedRelease;
  /** Same-account retry slots per account and cooling window (pipeline/sameAccountRetry.ts). */
  readonly retryBudget: RetryBudget;
  /** Odd quota header values, logged once per account and note (state/headerNotes.ts). */
  readonly headerNotes: HeaderNotes;
  /** The shared pool, when this router shares its state through a store (state/sharedState.ts). */
  readonly shared: SharedState | undefined;
  /** The store's reachability, for `/status`; undefined without a store. */
  readonly storeStatus: (() => StoreStatus) | undefined;
}

/** The endpoints forwarded upstream. */
export type Route = 'messages' | 'count_tokens' | 'models';

/** What the attempt loop did. */
export interface AttemptOutcome {
  /** `no_usable_account`: nothing was written; the relay step answers it. */
  outcome: DecisionOutcome;
  /** With `no_usable_account`: a usable account only lacked room (its cap, learned concurrency limit or ramp) and the request could not wait longer for it. */
  cappedOut: boolean;
  /** The answer was a server-sent-event stream. */
  streamed: boolean;
  /** The status the client got, or will get from the relay step. */
  status: number;
  servedBy: PlanAccount | null;
  attempts: AttemptRecord[];
  usage: UsageRecord | null;
  /** An upstream error to relay as the answer (nothing was written yet). */
  held: HeldAnswer | undefined;
}

/** A body-less request's facts: no model, no session. */
const NO_INFO: Readonly<RequestInfo> = { model: null, sticky: NO_STICKY_KEY, stream: null, maxTokens: null };

/** Request ids: a random per-process prefix and a counter (unique without a random draw per request). */
const ID_PREFIX = randomBytes(6).toString('base64url');
let requestCounter = 0;

/** The next request id, `req_router_<prefix><counter>`. */
export function nextRequestId(): string {
  return `req_router_${ID_PREFIX}${(++requestCounter).toString(36)}`;
}

/**
 * One request on its way through the steps. Each field is set by the step named beside it and
 * read by the later ones; every field exists from the start, so every context has one shape.
 */
export class RequestContext {
  /** Path with query string, as received. */
  readonly url: string;
  /** Path without the query string. */
  readonly path: string;
  /** authenticate */
  head!: ClientHead;
  /** route */
  route!: Route;
  /** route: the router's id of the request (the decision record's `requestId`); '' before. */
  requestId = '';
  /** route: when the request was taken on, epoch ms. */
  startedAtMs = 0;
  /** route: the configuration this request runs under for its whole life. */
  generation!: ConfigGeneration;
  /** readRequestBody; released (its budget given back) when the attempts end or the request fails. */
  body!: RequestBody;
  /** identifySession: model, sticky key (hashed), stream flag. */
  info: RequestInfo = NO_INFO;
  /** identifySession: the class its `x-claude-code-request-class` names (src/routing/requestClass.ts); `main` without one. */
  requestClass: RequestClass = 'main';
  /** identifySession: hash of its `x-claude-code-prompt-id` (as a session id's), or null. */
  promptIdHash: string | null = null;
  /** identifySession: hash of its `x-claude-code-agent-id` (a sub-agent's), or null. */
  agentIdHash: string | null = null;
  /** identifySession: it carried `x-claude-code-context-compacted` (the first request after a compaction). */
  contextCompacted = false;
  /** plan: the metrics parameters of this request's model. */
  params!: MetricsParams;
  /** plan */
  plan!: RoutePlan;
  /** plan: the ticket of the plan's probe, ended by the attempt on that account (or when the attempts end). */
  probe: ProbeTicket | undefined = undefined;
  /** attempt: whether the client is still there. */
  client!: ClientLink;
  /** attempt: the request's waits in the waiting room, in order (undefined while it has not waited). */
  waits: WaitRecord[] | undefined = undefined;
  /** attempt: what the running attempt counts against its account until its answer is committed (only on an account with admission state). */
  admission: AdmissionTicket | undefined = undefined;
  /**
   * attempt: per account that answered this request with a concurrency throttle, the most requests in
   * flight there (itself included) it goes back with (admission.ts: `throttledCap`).
   */
  throttledOn: Map<string, number> | undefined = undefined;
  /** attempt (the relay step completes its status) */
  outcome!: AttemptOutcome;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly services: RouterServices,
  ) {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    this.url = url;
    this.path = q === -1 ? url : url.slice(0, q);
  }
}
