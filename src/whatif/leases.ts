/**
 * In-flight leases on a virtual clock: each served request holds one on its account until its
 * answer ends (arrival + recorded duration); `release(nowMs)` ends those due. A binary min-heap
 * by end time. Pure.
 */
import type { WorldAccount } from './world';

export class VirtualLeases {
  private readonly ends: number[] = [];
  private readonly holders: WorldAccount[] = [];

  /** `account` holds a lease until `untilMs` (epoch ms). */
  hold(account: WorldAccount, untilMs: number): void {
    account.inflight++;
    const ends = this.ends;
    const holders = this.holders;
    let i = ends.length;
    ends.push(untilMs);
    holders.push(account);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (ends[parent] <= untilMs) break;
      ends[i] = ends[parent];
      holders[i] = holders[parent];
      i = parent;
    }
    ends[i] = untilMs;
    holders[i] = account;
  }

  /** Ends every lease due at or before `nowMs`. */
  release(nowMs: number): void {
    while (this.ends.length > 0 && this.ends[0] <= nowMs) {
      this.holders[0].inflight--;
      this.pop();
    }
  }

  private pop(): void {
    const ends = this.ends;
    const holders = this.holders;
    const lastEnd = ends.pop()!;
    const lastHolder = holders.pop()!;
    const n = ends.length;
    if (n === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const c = l + 1 < n && ends[l + 1] < ends[l] ? l + 1 : l;
      if (ends[c] >= lastEnd) break;
      ends[i] = ends[c];
      holders[i] = holders[c];
      i = c;
    }
    ends[i] = lastEnd;
    holders[i] = lastHolder;
  }
}
