/**
 * Paced release of a waiting-room queue: its waiters go one at a time, a little apart, from the
 * moment the thing they wait for is ready (an account's cooldown ends) — never all at once, so a
 * recovered account is not hit by every held request in the same instant. Readiness is asked
 * again before every release: an account that was throttled again by the first released request
 * holds the rest until its new cooldown ends.
 */
import type { WaitingRoom } from './waitingRoom';

/** Time between two releases of one queue: 250 ms. */
export const RELEASE_SPACING_MS = 250;

/** The first release after a wait is delayed by up to this much at random (ms), so routers that share an account do not send together. */
const FIRST_RELEASE_JITTER_MS = 50;

/** Releases the waiters of waiting-room queues one at a time, {@link RELEASE_SPACING_MS} apart, once each queue is ready. */
export class PacedRelease {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private closed = false;

  /**
   * @param room the waiting room whose queues it releases
   * @param readyInMs how long until `queue` may release its next waiter, ms (0 or less: now)
   * @param random numbers in [0, 1) for the first release's jitter
   */
  constructor(
    private readonly room: WaitingRoom,
    private readonly readyInMs: (queue: string) => number,
    private readonly random: () => number = Math.random,
  ) {}

  /** Starts releasing `queue` (a no-op while it is already being released). Call it after a request joined the queue. */
  start(queue: string): void {
    if (this.closed || this.timers.has(queue)) return;
    this.schedule(queue, Math.max(0, this.readyInMs(queue)) + this.random() * FIRST_RELEASE_JITTER_MS);
  }

  /** Stops every timer (the router closes; the room itself releases its waiters). */
  close(): void {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private schedule(queue: string, ms: number): void {
    const timer = setTimeout(() => this.tick(queue), ms);
    timer.unref();
    this.timers.set(queue, timer);
  }

  private tick(queue: string): void {
    this.timers.delete(queue);
    if (this.closed || this.room.waiting(queue) === 0) return;
    const wait = this.readyInMs(queue);
    if (wait > 0) return this.schedule(queue, wait);
    this.room.wake(queue, 1);
    if (this.room.waiting(queue) > 0) this.schedule(queue, RELEASE_SPACING_MS);
  }
}
