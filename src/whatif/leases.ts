/**
 * In-flight leases on a virtual clock: each served request holds one on its account until its
 * answer ends (arrival + recorded duration), with its cost reservation; `release(nowMs)` ends
 * those due. A binary min-heap by end time. Pure.
 */
import { addTokens, type TokensByKind } from '../quota/learnedCosts';
import type { WorldAccount } from './world';

/** The reservation's margin over the true tokens: the stand-in for the router's cost estimate (its safety margin). */
export const RESERVATION_MARGIN = 1.15;

interface Lease {
  holder: WorldAccount;
  reserved: TokensByKind;
}

export class VirtualLeases {
  private readonly ends: number[] = [];
  private readonly leases: Lease[] = [];

  /** `account` holds a lease until `untilMs` (epoch ms), reserving `tokens` × the margin. */
  hold(account: WorldAccount, untilMs: number, tokens: TokensByKind): void {
    account.inflight++;
    const reserved: TokensByKind = {
      inputTokens: tokens.inputTokens * RESERVATION_MARGIN,
      cacheReadTokens: tokens.cacheReadTokens * RESERVATION_MARGIN,
      cacheWriteTokens: tokens.cacheWriteTokens * RESERVATION_MARGIN,
      outputTokens: tokens.outputTokens * RESERVATION_MARGIN,
    };
    addTokens(account.reserved, reserved, 1);
    const lease = { holder: account, reserved };
    const ends = this.ends;
    const leases = this.leases;
    let i = ends.length;
    ends.push(untilMs);
    leases.push(lease);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (ends[parent] <= untilMs) break;
      ends[i] = ends[parent];
      leases[i] = leases[parent];
      i = parent;
    }
    ends[i] = untilMs;
    leases[i] = lease;
  }

  /** Ends every lease due at or before `nowMs`. */
  release(nowMs: number): void {
    while (this.ends.length > 0 && this.ends[0] <= nowMs) {
      const { holder, reserved } = this.leases[0];
      holder.inflight--;
      if (holder.inflight === 0) addTokens(holder.reserved, holder.reserved, -1);
      else addTokens(holder.reserved, reserved, -1);
      this.pop();
    }
  }

  private pop(): void {
    const ends = this.ends;
    const leases = this.leases;
    const lastEnd = ends.pop()!;
    const lastLease = leases.pop()!;
    const n = ends.length;
    if (n === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const c = l + 1 < n && ends[l + 1] < ends[l] ? l + 1 : l;
      if (ends[c] >= lastEnd) break;
      ends[i] = ends[c];
      leases[i] = leases[c];
      i = c;
    }
    ends[i] = lastEnd;
    leases[i] = lastLease;
  }
}
