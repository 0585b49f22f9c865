/**
 * The requests the proxy holds instead of answering them at once — the transient wait for a
 * cooling account, the concurrency queue of an account at its limit, the admission ramp of an
 * account many sessions move to — all under one bound, so memory stays bounded under any burst:
 * at most `routing.max-waiting-requests` requests, whose bodies together take at most half of
 * `routing.max-buffered-body-bytes` (the other half stays for requests that are being served).
 * A request that does not fit is not held: its caller answers at once (docs/routing.md#waiting).
 *
 * Each hold names a queue (e.g. an account's label); {@link WaitingRoom.wake} releases the
 * oldest waiters of a queue first. A hold also ends at its deadline, or when the client leaves
 * — then it gives its place back at once and holds nothing.
 */
import type { ClientLink } from '../upstream/call';

/** How a hold ended: woken by {@link WaitingRoom.wake}, at its deadline, or the client left. */
export type WaitEnd = 'woken' | 'deadline' | 'client_gone';

/** The bound every queue shares. */
export interface WaitingLimits {
  /** Requests held at once, across every queue (0: none is ever held). */
  maxRequests: number;
  /** Bytes of held request bodies at once, across every queue. */
  maxBodyBytes: number;
}

/** What a request asks to be held for. */
export interface HoldRequest {
  /** The queue it waits in (e.g. an account's label). */
  queue: string;
  /** The size of its body, bytes (it stays in memory while the request waits). */
  bodyBytes: number;
  /** The longest it may wait, ms; it ends with `deadline` then. */
  maxMs: number;
  /** Its client: leaving ends the hold with `client_gone`. */
  client: ClientLink;
}

interface Waiter {
  readonly bodyBytes: number;
  readonly finish: (end: WaitEnd) => void;
}

/** The waiting requests of one router, and the bound they share. */
export class WaitingRoom {
  private requests = 0;
  private bytes = 0;
  private closed = false;
  private readonly queues = new Map<string, Waiter[]>();

  /** Requests held now, across every queue. */
  get heldRequests(): number {
    return this.requests;
  }

  /** Bytes of the bodies held now, across every queue. */
  get heldBodyBytes(): number {
    return this.bytes;
  }

  /** Requests held now in `queue`. */
  waiting(queue: string): number {
    return this.queues.get(queue)?.length ?? 0;
  }

  /** Whether one more request with a body of `bodyBytes` fits under `limits` now (never after {@link close}). */
  fits(bodyBytes: number, limits: WaitingLimits): boolean {
    return !this.closed && this.requests < limits.maxRequests && this.bytes + bodyBytes <= limits.maxBodyBytes;
  }

  /**
   * Holds a request until it is woken, its `maxMs` pass, or its client leaves.
   * @returns how the hold ended; undefined at once (holding nothing) when it does not fit under
   *   `limits`, or when the client has already gone
   */
  hold(request: HoldRequest, limits: WaitingLimits): Promise<WaitEnd> | undefined {
    const { queue, bodyBytes, client } = request;
    if (client.gone || !this.fits(bodyBytes, limits)) return undefined;
    return new Promise<WaitEnd>((resolve) => {
      let done = false;
      const finish = (end: WaitEnd): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        offGone();
        this.leave(queue, waiter);
        resolve(end);
      };
      const waiter: Waiter = { bodyBytes, finish };
      const timer = setTimeout(() => finish('deadline'), Math.max(0, request.maxMs));
      const offGone = client.onGone(() => finish('client_gone'));
      let list = this.queues.get(queue);
      if (!list) this.queues.set(queue, (list = []));
      list.push(waiter);
      this.requests++;
      this.bytes += bodyBytes;
    });
  }

  /**
   * Releases up to `count` of the oldest waiters of `queue` (they end with `woken`).
   * @returns how many were released
   */
  wake(queue: string, count = 1): number {
    const list = this.queues.get(queue);
    if (!list) return 0;
    const released = list.slice(0, Math.max(0, count));
    for (const w of released) w.finish('woken');
    return released.length;
  }

  /** The router is closing: every waiter is released (each re-checks and answers) and nothing is held from now on. */
  close(): void {
    this.closed = true;
    for (const queue of [...this.queues.keys()]) this.wake(queue, Infinity);
  }

  private leave(queue: string, waiter: Waiter): void {
    const list = this.queues.get(queue);
    const i = list ? list.indexOf(waiter) : -1;
    if (!list || i === -1) return;
    list.splice(i, 1);
    if (list.length === 0) this.queues.delete(queue);
    this.requests--;
    this.bytes -= waiter.bodyBytes;
  }
}

/** The bound of `policy`: `maxWaitingRequests` requests, half of `maxBufferedBodyBytes` of bodies. */
export function waitingLimits(policy: { maxWaitingRequests: number; maxBufferedBodyBytes: number }): WaitingLimits {
  return { maxRequests: policy.maxWaitingRequests, maxBodyBytes: Math.floor(policy.maxBufferedBodyBytes / 2) };
}
