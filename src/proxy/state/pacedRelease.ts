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
  /** Each queue's next release: its timer, when it fires (epoch ms), and whether it only keeps the spacing after a release. */
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; atMs: number; spacing: boolean }>();
  private closed = false;

  /**
   * @param room the waiting room whose queues it releases
   * @param readyInMs how long until `queue` may release its next waiter, ms (0 or less: now)
   * @param random numbers in [0, 1) for the first release's jitter
   * @param now the clock, epoch ms
   */
  constructor(
    private readonly room: WaitingRoom,
    private readonly readyInMs: (queue: string) => number,
    private readonly random: () => number = Math.random,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Starts releasing `queue`. Call it after a request joined the queue. While it is already being
   * released this only brings the next release forward, when the queue became ready sooner.
   */
  start(queue: string): void {
    if (this.closed) return;
    const readyAtMs = this.now() + Math.max(0, this.readyInMs(queue));
    const next = this.timers.get(queue);
    if (next) {
      if (next.spacing || next.atMs <= readyAtMs + FIRST_RELEASE_JITTER_MS) return;
      clearTimeout(next.timer);
    }
    this.schedule(queue, readyAtMs - this.now() + this.random() * FIRST_RELEASE_JITTER_MS);
  }

  /**
   * Asks every queue being released whether it became ready sooner than its next release (a
   * cooldown lifted early: by a person, by evidence, by another router) and brings that release
   * forward. Call it when the readiness may have come sooner (a cooldown was lifted).
   */
  recheck(): void {
    for (const queue of this.timers.keys()) this.start(queue);
  }

  /** Stops every timer (the router closes; the room itself releases its waiters). */
  close(): void {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t.timer);
    this.timers.clear();
  }

  private schedule(queue: string, ms: number, spacing = false): void {
    const timer = setTimeout(() => this.tick(queue), ms);
    timer.unref();
    this.timers.set(queue, { timer, atMs: this.now() + ms, spacing });
  }

  private tick(queue: string): void {
    this.timers.delete(queue);
    if (this.closed || this.room.waiting(queue) === 0) return;
    const wait = this.readyInMs(queue);
    if (wait > 0) return this.schedule(queue, wait);
    this.room.wake(queue, 1);
    if (this.room.waiting(queue) > 0) this.schedule(queue, RELEASE_SPACING_MS, true);
  }
}
